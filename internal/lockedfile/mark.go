package lockedfile

import (
	"errors"
	"os"
)

// Mark records in the lock file at path that the store it guards has written its
// state, so that a state file found missing later can be told from one never
// written: a store whose lock file holds the mark and whose state file is gone
// lost that file (a mistaken rm, a partial restore) and must not start again from
// nothing. The caller holds the lock. text is what the lock file then says to a
// person who opens it. The mark is fsync'd before Mark returns, so it reaches the
// disk before the state it records; the directory entry of a new lock file is
// fsync'd by the WriteAtomic of that state.
func Mark(path, text string) error {
	f, err := os.OpenFile(path, os.O_WRONLY, 0)
	if err != nil {
		return err
	}
	if _, err := f.WriteAt([]byte(text), 0); err != nil {
		f.Close()
		return err
	}
	if err := f.Sync(); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}

// Marked reports whether the lock file at path holds a mark (Mark): whether it is
// not empty. A missing lock file holds none.
func Marked(path string) (bool, error) {
	fi, err := os.Stat(path)
	switch {
	case errors.Is(err, os.ErrNotExist):
		return false, nil
	case err != nil:
		return false, err
	}
	return fi.Size() > 0, nil
}
