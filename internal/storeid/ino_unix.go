//go:build unix

package storeid

import (
	"os"
	"strconv"
	"syscall"
)

// inode returns dir's device and inode, "dev.ino", or "" when unknown: a copy of
// the directory, even at the same path on another machine, has other ones.
func inode(dir string) string {
	fi, err := os.Stat(dir)
	if err != nil {
		return ""
	}
	st, ok := fi.Sys().(*syscall.Stat_t)
	if !ok {
		return ""
	}
	return strconv.FormatUint(uint64(st.Dev), 16) + "." + strconv.FormatUint(uint64(st.Ino), 16)
}
