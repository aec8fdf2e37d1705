//go:build !unix

package filestore

import (
	"context"
	"errors"
)

func lockSupported() error {
	return errors.New("lease/filestore: the file store needs a Unix system (flock); use another store")
}

func lockFile(context.Context, string) (func(), error) { return nil, lockSupported() }
