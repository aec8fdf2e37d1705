// Package hostid names where a file lives: the host's boot and the file's device
// and inode. A file whose saved Origin differs from the one it has now was copied
// or restored to another inode or host, its host's disk was cloned into another
// machine (a VM clone boots with a new boot id), or the host rebooted.
package hostid

import (
	"os"
	"strings"
)

// bootIDPath is where Linux keeps a random id made at each boot.
const bootIDPath = "/proc/sys/kernel/random/boot_id"

// Boot returns the id of the running boot of this host, or "" where the system
// has none (not Linux). A rebooted host, and every clone of a virtual machine,
// has a new one.
func Boot() string {
	b, err := os.ReadFile(bootIDPath)
	if err != nil {
		return ""
	}
	return strings.TrimSpace(string(b))
}

// Origin returns where the file path lives: the boot id and FileID(path), as one
// string. It returns "" when path cannot be examined. Two calls on one file
// return one origin until the host reboots; a copy of the file, on this host or
// another, has another.
func Origin(path string) string {
	id, err := FileID(path)
	if err != nil {
		return ""
	}
	return "boot=" + Boot() + ";file=" + id
}

// SameFile reports whether origin, made by Origin, names the file path is now,
// whatever the boot: false when path is a copy of the file origin was made for
// (another inode), and when origin is empty. A reboot keeps it true; so does a
// clone of a whole disk, which cannot be told apart from a reboot.
func SameFile(origin, path string) bool {
	_, file, ok := strings.Cut(origin, ";file=")
	if !ok || file == "" {
		return false
	}
	id, err := FileID(path)
	return err == nil && id == file
}
