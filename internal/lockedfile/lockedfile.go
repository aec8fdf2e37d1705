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
	tmp := path + ".tmp"
	w, err := os.OpenFile(tmp, os.O_CREATE|os.O_TRUNC|os.O_WRONLY, perm)
	if err != nil {
		return err
	}
	if _, err := w.Write(data); err != nil {
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
