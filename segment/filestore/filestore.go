// Package filestore keeps segment counters in one directory on the local disk: the
// embedded default of flurry serve's segment namespace, needing no server and no
// SQL engine.
//
// The whole store is one JSON file, segments.json, guarded by an exclusive OS file
// lock (flock) on segments.lock beside it for the length of each call, so any number
// of processes on the machine can share the directory; a process that dies holding
// the lock loses it at once. Every change is written to a temporary file, fsync'd,
// renamed over the old one, and the directory is fsync'd before the call returns,
// so a block a caller received is never handed out again, even after a crash or a
// power loss. This is the discipline of lease/filestore.
//
// The lock file also records that the store wrote segments.json, from its first
// write on: a directory whose segments.json is missing while segments.lock says so
// (a mistaken rm, a partial restore) is refused by every call, with what to do,
// instead of being taken for a new store that hands out every tag from 1 again. A
// directory with no lock file, or one only ever read, is a new store.
//
// Each Take or Return costs one fsync'd write of the file, so the file suits the
// rates an allocator's ranges make (one write per range, not per ID). It works on
// Unix systems. Do not put the directory on a network file system: flock there is
// not reliable. Back the directory up with the lease directory: segments.json holds
// every tag's high-water mark, and restoring an older copy would hand out IDs again.
//
//	file:///var/lib/flurry/segments     an absolute directory
//	file:flurry-data/segments           relative to the working directory
package filestore

import (
	"github.com/flurryid/flurry/internal/storeurl"

	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"sync/atomic"
	"time"

	"github.com/flurryid/flurry/internal/lockedfile"
	"github.com/flurryid/flurry/internal/storeid"
	"github.com/flurryid/flurry/segment"
	"github.com/flurryid/flurry/segment/segmentstore"
)

// The names of the store's files in its directory.
const (
	StateFile = "segments.json"
	LockFile  = "segments.lock"
)

// Store is a segment.Store in a directory. It holds nothing open between calls.
type Store struct {
	dir    string
	closed atomic.Bool
}

// New returns a store in dir, creating the directory (mode 0700) if needed. The
// state file is written by the first change (Create).
func New(dir string) (*Store, error) {
	if err := lockedfile.MakeDir("segment/filestore", dir); err != nil {
		return nil, err
	}
	return &Store{dir: dir}, nil
}

// Options configures a Store for Open.
type Options struct {
	// Dir is the directory of the state and lock files, created (mode 0700) if
	// missing. ParseURL sets it from the URL's path.
	Dir string
}

// ParseURL reads a URL of the form file:///absolute/dir or file:relative/dir into
// Options for Open. Query keys are refused.
func ParseURL(rawURL string) (Options, error) {
	dir, err := storeurl.FileDir("segment/filestore", rawURL)
	return Options{Dir: dir}, err
}

// Open returns New(o.Dir). It takes a context for the shape every store's Open
// has; making the directory does not block on anything it could end.
func Open(_ context.Context, o Options) (*Store, error) { return New(o.Dir) }

// HasState reports whether dir holds a file store's state, that is, whether a tag
// was ever created there. A missing directory has none. A directory whose state
// file is gone while its lock file records that the store wrote it is an error
// (see Store), not a store without state.
func HasState(dir string) (bool, error) {
	path := filepath.Join(dir, StateFile)
	_, err := os.Stat(path)
	switch {
	case err == nil:
		return true, nil
	case errors.Is(err, os.ErrNotExist):
		lock := filepath.Join(dir, LockFile)
		marked, err := lockedfile.Marked(lock)
		if err != nil {
			return false, fmt.Errorf("segment/filestore: %w", err)
		}
		if marked {
			return false, stateMissing(path, lock)
		}
		return false, nil
	default:
		return false, fmt.Errorf("segment/filestore: %w", err)
	}
}

// lockNote is what the lock file says once the store has written its state
// (lockedfile.Mark).
const lockNote = "flurry segment/filestore: " + StateFile + " was written in this directory. While this file says so, a missing " + StateFile + " is refused: it holds every tag's high-water mark.\n"

// stateMissing is the refusal of a store whose state file is gone while its lock
// file records that the store wrote it.
func stateMissing(path, lock string) error {
	return fmt.Errorf("segment/filestore: %s is missing, but %s records that this store wrote it: it held every tag's high-water mark, and going on without it would hand out IDs again; stop every process that uses the store and restore %s from a backup, or, without one, delete %s and create each tag again above the highest ID in use (flurry segment create URL TAG --start N)",
		path, lock, StateFile, LockFile)
}

// Dir returns the store's directory.
func (s *Store) Dir() string { return s.dir }

// block is a returned block in the file.
type block struct {
	First int64 `json:"first"`
	Last  int64 `json:"last"`
}

type tagState struct {
	Max         int64   `json:"max"`
	Step        int64   `json:"step"`
	Description string  `json:"description,omitempty"`
	UpdatedMs   int64   `json:"updated_ms"`
	Returned    []block `json:"returned,omitempty"` // by First
}

type state struct {
	// Format is the file's version; a flurry that does not know it refuses the file
	// rather than misread a high-water mark.
	Format int                  `json:"format"`
	Tags   map[string]*tagState `json:"tags"`
}

const format = 1

// update runs fn on the store's state under the lock and writes the state back when
// fn reports a change.
func (s *Store) update(ctx context.Context, fn func(st *state, now time.Time) (changed bool, err error)) error {
	if s.closed.Load() {
		return errors.New("segment/filestore: store closed")
	}
	if err := ctx.Err(); err != nil {
		return err
	}
	lock := filepath.Join(s.dir, LockFile)
	unlock, err := lockedfile.Lock(ctx, lock)
	if err != nil {
		return fmt.Errorf("segment/filestore: %w", err)
	}
	defer unlock()
	// The lock file records that the state was written (marked), so that a
	// state file deleted later is refused rather than taken for a new store.
	marked, err := lockedfile.Marked(lock)
	if err != nil {
		return fmt.Errorf("segment/filestore: %w", err)
	}
	mark := func() error {
		if marked {
			return nil
		}
		if err := lockedfile.Mark(lock, lockNote); err != nil {
			return fmt.Errorf("segment/filestore: %w", err)
		}
		marked = true
		return nil
	}
	path := filepath.Join(s.dir, StateFile)
	st := state{Format: format, Tags: map[string]*tagState{}}
	b, err := os.ReadFile(path)
	switch {
	case errors.Is(err, os.ErrNotExist):
		if marked {
			return stateMissing(path, lock)
		}
	case err != nil:
		return fmt.Errorf("segment/filestore: %w", err)
	default:
		if err := json.Unmarshal(b, &st); err != nil {
			return fmt.Errorf("segment/filestore: %s is damaged (%v); it holds every tag's high-water mark, so restore it from a backup rather than delete it", path, err)
		}
		if st.Format != format {
			return fmt.Errorf("segment/filestore: %s has format %d, this flurry reads format %d; run the flurry that wrote it", path, st.Format, format)
		}
		if st.Tags == nil {
			st.Tags = map[string]*tagState{}
		}
		for name, t := range st.Tags {
			if err := t.check(); err != nil {
				return fmt.Errorf("segment/filestore: %s is damaged: tag %q: %v; restore it from a backup rather than delete it", path, name, err)
			}
		}
		// A store written by a flurry from before the mark gets it now.
		if err := mark(); err != nil {
			return err
		}
	}
	changed, err := fn(&st, time.Now())
	if err != nil || !changed {
		return err
	}
	out, err := json.MarshalIndent(&st, "", " ")
	if err != nil {
		return fmt.Errorf("segment/filestore: %w", err)
	}
	// The mark first: a crash between the two leaves a mark without a state
	// that never handed anything out, which is refused (and explained), never
	// a state without its mark.
	if err := mark(); err != nil {
		return err
	}
	if err := lockedfile.WriteAtomic(path, append(out, '\n'), 0o600); err != nil {
		return fmt.Errorf("segment/filestore: %w", err)
	}
	return nil
}

// check refuses a tag whose fields could make a Take hand out a value twice.
func (t *tagState) check() error {
	if t == nil {
		return errors.New("null")
	}
	if t.Max < 0 || t.Step < 1 || t.Step > segment.MaxStep {
		return fmt.Errorf("max %d, step %d", t.Max, t.Step)
	}
	for i, b := range t.Returned {
		if b.First < 1 || b.Last < b.First || b.Last > t.Max || i > 0 && b.First <= t.Returned[i-1].Last {
			return fmt.Errorf("returned block %d..%d", b.First, b.Last)
		}
	}
	return nil
}

func unknown(name string) error {
	return fmt.Errorf("%w %q: create it first (flurry segment create URL %s)", segment.ErrUnknownTag, name, name)
}

// Take implements segment.Store.
func (s *Store) Take(ctx context.Context, name string, n, floor, limit int64) (segment.Block, error) {
	limit, err := segmentstore.CheckTake(name, n, floor, limit)
	if err != nil {
		return segment.Block{}, err
	}
	var out segment.Block
	err = s.update(ctx, func(st *state, now time.Time) (bool, error) {
		t := st.Tags[name]
		if t == nil {
			return false, unknown(name)
		}
		for i, b := range t.Returned {
			if b.First > floor {
				t.Returned = append(t.Returned[:i], t.Returned[i+1:]...)
				t.UpdatedMs = now.UnixMilli()
				out = segment.Block{First: b.First, Last: b.Last, Step: t.Step, Returned: true}
				return true, nil
			}
		}
		b, err := segmentstore.FreshBlock(t.Max, floor, n, limit)
		if err != nil {
			return false, fmt.Errorf("segment/filestore: tag %q: %w", name, err)
		}
		t.Max = b.Last
		t.UpdatedMs = now.UnixMilli()
		b.Step = t.Step
		out = b
		return true, nil
	})
	return out, err
}

// Return implements segment.Store. It refuses values above the tag's high-water
// mark and a block that overlaps one returned before.
func (s *Store) Return(ctx context.Context, name string, b segment.Block) error {
	if err := segmentstore.CheckReturn(name, b); err != nil {
		return err
	}
	return s.update(ctx, func(st *state, now time.Time) (bool, error) {
		t := st.Tags[name]
		if t == nil {
			return false, unknown(name)
		}
		if b.Last > t.Max {
			return false, fmt.Errorf("segment/filestore: return of %d..%d to tag %q: values above %d were never handed out; return only what Take gave", b.First, b.Last, name, t.Max)
		}
		i := sort.Search(len(t.Returned), func(i int) bool { return t.Returned[i].First > b.First })
		if i > 0 && t.Returned[i-1].Last >= b.First || i < len(t.Returned) && t.Returned[i].First <= b.Last {
			return false, fmt.Errorf("segment/filestore: return of %d..%d to tag %q: it overlaps a block returned before; a block may be returned once only", b.First, b.Last, name)
		}
		t.Returned = append(t.Returned, block{})
		copy(t.Returned[i+1:], t.Returned[i:])
		t.Returned[i] = block{First: b.First, Last: b.Last}
		t.UpdatedMs = now.UnixMilli()
		return true, nil
	})
}

// Create implements segment.Store.
func (s *Store) Create(ctx context.Context, t segment.Tag) error {
	if err := segmentstore.CheckCreate(t); err != nil {
		return err
	}
	return s.update(ctx, func(st *state, now time.Time) (bool, error) {
		if st.Tags[t.Name] != nil {
			return false, fmt.Errorf("segment/filestore: %w: %q", segment.ErrTagExists, t.Name)
		}
		st.Tags[t.Name] = &tagState{Max: t.Max, Step: t.Step, Description: t.Description, UpdatedMs: now.UnixMilli()}
		return true, nil
	})
}

// SetStep implements segment.Store.
func (s *Store) SetStep(ctx context.Context, name string, step int64) error {
	if err := segmentstore.CheckTagName(name); err != nil {
		return err
	}
	if err := segmentstore.CheckStep(step); err != nil {
		return err
	}
	return s.update(ctx, func(st *state, now time.Time) (bool, error) {
		t := st.Tags[name]
		if t == nil {
			return false, unknown(name)
		}
		t.Step = step
		t.UpdatedMs = now.UnixMilli()
		return true, nil
	})
}

// Tags implements segment.Store.
func (s *Store) Tags(ctx context.Context) ([]segment.Tag, error) {
	var out []segment.Tag
	err := s.update(ctx, func(st *state, _ time.Time) (bool, error) {
		out = make([]segment.Tag, 0, len(st.Tags))
		for name, t := range st.Tags {
			x := segment.Tag{Name: name, Max: t.Max, Step: t.Step, Description: t.Description, Updated: time.UnixMilli(t.UpdatedMs).UTC()}
			for _, b := range t.Returned {
				x.Returned += b.Last - b.First + 1
			}
			out = append(out, x)
		}
		return false, nil
	})
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out, err
}

// Close implements segment.Store: later calls fail. The store holds nothing open.
func (s *Store) Close() error {
	s.closed.Store(true)
	return nil
}

// Identity is private: only the processes of this machine can use the directory,
// and a server with a data directory of its own hands out the same values. Its ID
// is the host and a random value kept in the directory's identity file.
func (s *Store) Identity(context.Context) (segment.StoreIdentity, error) {
	id, err := storeid.File(s.dir)
	if err != nil {
		return segment.StoreIdentity{}, fmt.Errorf("segment/filestore: %w", err)
	}
	return segment.StoreIdentity{ID: id, Private: true}, nil
}
