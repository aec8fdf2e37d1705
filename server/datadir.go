package server

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
)

// dataRecordFile is the file in the data directory where flurry serve records
// that the embedded default's segment store holds the counters of its segment
// namespaces: <data>/segments deleted whole (segments.json and the lock file
// that also records it) is then refused at start instead of taken for a new
// store that hands out every tag from 1 again.
const dataRecordFile = "flurry-data.json"

// dataRecord is the content of dataRecordFile. Unknown fields are ignored, so
// that a later flurry may add some.
type dataRecord struct {
	Note string `json:"note"`
	// Segments says that <data>/segments held segments.json.
	Segments bool `json:"segments,omitempty"`
}

const dataRecordNote = "flurry serve's record of what this data directory holds; a store listed here whose files are missing is refused at start (docs/server.md)"

// readDataRecord reads the data directory's record; a missing file is an empty
// record.
func readDataRecord(dataDir string) (dataRecord, error) {
	var r dataRecord
	path := filepath.Join(dataDir, dataRecordFile)
	b, err := os.ReadFile(path)
	switch {
	case errors.Is(err, os.ErrNotExist):
		return r, nil
	case err != nil:
		return r, fmt.Errorf("reading %s: %w", path, err)
	}
	if err := json.Unmarshal(b, &r); err != nil {
		return r, fmt.Errorf("%s is damaged (%v); it records which embedded stores this data directory holds: restore it from a backup, or delete it if every store it lists is in place", path, err)
	}
	return r, nil
}

// recordSegments notes in the data directory's record that <data>/segments holds
// the segment counters, unless it says so already. Servers sharing the data
// directory may write it at once: each writes a temporary file of its own and
// renames it over the record, and all write the same content.
func recordSegments(dataDir string) error {
	r, err := readDataRecord(dataDir)
	if err != nil || r.Segments {
		return err
	}
	r.Note, r.Segments = dataRecordNote, true
	b, err := json.MarshalIndent(&r, "", " ")
	if err != nil {
		return err
	}
	if err := writeFileAtomic(filepath.Join(dataDir, dataRecordFile), append(b, '\n')); err != nil {
		return fmt.Errorf("recording the segment store in the data directory: %w", err)
	}
	return nil
}

// writeFileAtomic replaces path with data by a temporary file of its own,
// fsync'd, renamed over path, and the directory fsync'd.
func writeFileAtomic(path string, data []byte) error {
	dir := filepath.Dir(path)
	f, err := os.CreateTemp(dir, "."+filepath.Base(path)+".*.tmp")
	if err != nil {
		return err
	}
	tmp := f.Name()
	defer os.Remove(tmp) // gone after the rename; left behind only on an error
	if _, err := f.Write(data); err != nil {
		f.Close()
		return err
	}
	if err := f.Chmod(0o644); err != nil {
		f.Close()
		return err
	}
	if err := f.Sync(); err != nil {
		f.Close()
		return err
	}
	if err := f.Close(); err != nil {
		return err
	}
	if err := os.Rename(tmp, path); err != nil {
		return err
	}
	d, err := os.Open(dir)
	if err != nil {
		return err
	}
	defer d.Close()
	return d.Sync()
}
