//go:build !unix

package hostid

import (
	"errors"
	"runtime"
)

// FileID fails where the system gives no device and inode: Origin is then empty,
// and a journal that records it counts as copied on every load, which is safe
// (it only costs a fast resume). flurry's file stores and journals need a Unix
// system anyway.
func FileID(path string) (string, error) {
	return "", errors.New("hostid: " + path + ": no device and inode on " + runtime.GOOS)
}
