//go:build unix

package hostid

import (
	"fmt"
	"os"
	"syscall"
)

// FileID returns the device and inode of the file path, as "dev:inode": a copy of
// the file (cp, a restore from a backup, rsync) is another inode.
func FileID(path string) (string, error) {
	fi, err := os.Stat(path)
	if err != nil {
		return "", err
	}
	st, ok := fi.Sys().(*syscall.Stat_t)
	if !ok {
		return "", fmt.Errorf("hostid: %s: no device and inode", path)
	}
	return fmt.Sprintf("%d:%d", uint64(st.Dev), uint64(st.Ino)), nil
}
