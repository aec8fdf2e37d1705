// Package lockedfile holds what the file stores (lease/filestore,
// segment/filestore) share: an exclusive lock between processes on one machine, and
// a crash-safe replacement of a file's content.
package lockedfile

import (
	"fmt"
	"os"
	"path/filepath"
)

// WriteAtomic replaces the content of path with data so that a crash or a power
// loss leaves either the old content or the new, never a mix: it writes a
// temporary file beside path, fsyncs it, renames it over path and fsyncs the
// directory. The caller holds the lock that guards path, since the temporary file's
// name is fixed (path + ".tmp").
func WriteAtomic(path string, data []byte, perm os.FileMode) error {
	return WriteAtomicWith(path, perm, func(string) ([]byte, error) { return data, nil })
}

// WriteAtomicWith is WriteAtomic with the content made by data once the temporary
// file exists, from its name: content that names the file's own inode (which the
// rename keeps) is made this way.
func WriteAtomicWith(path string, perm os.FileMode, data func(tmp string) ([]byte, error)) error {
	tmp := path + ".tmp"
	w, err := os.OpenFile(tmp, os.O_CREATE|os.O_TRUNC|os.O_WRONLY, perm)
	if err != nil {
		return err
	}
	b, err := data(tmp)
	if err != nil {
		w.Close()
		return err
	}
	if _, err := w.Write(b); err != nil {
		w.Close()
		return err
	}
	if err := w.Sync(); err != nil {
		w.Close()
		return err
	}
	if err := w.Close(); err != nil {
		return err
	}
	if err := os.Rename(tmp, path); err != nil {
		return err
	}
	return syncDir(filepath.Dir(path))
}

func syncDir(dir string) error {
	d, err := os.Open(dir)
	if err != nil {
		return err
	}
	defer d.Close()
	if err := d.Sync(); err != nil && !dirSyncUnsupported(err) {
		return fmt.Errorf("fsync directory: %w", err)
	}
	return nil
}

// MakeDir readies dir for a file store: it fails where Lock does not work (nothing is
// created then), and otherwise creates dir with mode 0700 if it is missing. pkg
// prefixes its errors.
func MakeDir(pkg, dir string) error {
	if dir == "" {
		return fmt.Errorf("%s: no directory given", pkg)
	}
	if err := Supported(); err != nil {
		return fmt.Errorf("%s: %w", pkg, err)
	}
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return fmt.Errorf("%s: %w", pkg, err)
	}
	return nil
}
