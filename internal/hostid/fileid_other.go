//go:build !unix

package hostid

import (
	"fmt"
	"os"
)

// FileID returns the file's identity where the system gives no inode: its size
// and modification time, which a copy that keeps times (cp -a) keeps too, so a
// copy is not always told apart there.
func FileID(path string) (string, error) {
	fi, err := os.Stat(path)
	if err != nil {
		return "", err
	}
	return fmt.Sprintf("size=%d,mtime=%d", fi.Size(), fi.ModTime().UnixNano()), nil
}
