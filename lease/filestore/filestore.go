// Package filestore keeps node-value leases in local files: the embedded default for
// processes on one machine, needing no server.
//
// Each scope is one JSON file in a directory, guarded by an exclusive OS file lock
// (flock) on a lock file beside it for the length of each operation. Every change is
// written to a temporary file, fsync'd, renamed over the old one, and the directory is
// fsync'd, so the high-water marks survive a crash or power loss. Lease expiry is
// judged by the machine's wall clock, which every process on the machine shares.
//
// The lock file also records that the scope's file was written, from its first
// write on: a scope whose file is missing while its lock file says so (a mistaken
// rm, a partial restore) is refused, with what to do, instead of handing out its
// values with no high-water mark. A scope with no lock file, or one only ever
// listed, is a new scope.
//
// It works on Unix systems. Do not put the directory on a network file system: flock
// there is not reliable.
package filestore

import (
	"github.com/flurryid/flurry/internal/storeurl"

	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/flurryid/flurry/internal/lockedfile"
	"github.com/flurryid/flurry/internal/storeid"
	"github.com/flurryid/flurry/lease"
	"github.com/flurryid/flurry/lease/leasestore"
)

// Store is a lease.Store in a directory of files.
type Store struct {
	dir string

	// locks holds a lockedfile.Mutex per scope file, so that the sessions of this
	// process wait for a scope's file lock in turn, in Go, with at most one OS
	// thread blocked in flock per scope.
	mu    sync.Mutex
	locks map[string]*lockedfile.Mutex
}

// New returns a store in dir, creating the directory (mode 0700) if needed.
func New(dir string) (*Store, error) {
	if err := lockedfile.MakeDir("lease/filestore", dir); err != nil {
		return nil, err
	}
	return &Store{dir: dir, locks: map[string]*lockedfile.Mutex{}}, nil
}

// Options configures a Store for Open.
type Options struct {
	// Dir is the directory of the scope files, created (mode 0700) if missing.
	// ParseURL sets it from the URL's path.
	Dir string
}

// ParseURL reads a URL of the form file:///absolute/dir or file:relative/dir into
// Options for Open. Query keys are refused.
func ParseURL(rawURL string) (Options, error) {
	dir, err := storeurl.FileDir("lease/filestore", rawURL)
	return Options{Dir: dir}, err
}

// Open returns New(o.Dir). It takes a context for the shape every store's Open
// has; making the directory does not block on anything it could end.
func Open(_ context.Context, o Options) (*Store, error) { return New(o.Dir) }

// Dir returns the store's directory.
func (s *Store) Dir() string { return s.dir }

type record struct {
	Owner     string `json:"owner,omitempty"`
	Token     string `json:"token,omitempty"`
	ExpiresMs int64  `json:"expires_ms,omitempty"`
	Mark      int64  `json:"mark"`
	// Epoch is the write count (lease.Lease.Epoch); absent in files of a flurry from
	// before epochs, which then count from 0.
	Epoch int64 `json:"epoch,omitempty"`
}

type file struct {
	Scope  string            `json:"scope"`
	Values map[string]record `json:"values"`
}

func (s *Store) paths(scope string) (data, lock string) {
	sum := sha256.Sum256([]byte(scope))
	name := strings.NewReplacer("/", "_", ":", "_").Replace(scope)
	if len(name) > 80 {
		name = name[:80]
	}
	base := filepath.Join(s.dir, name+"-"+hex.EncodeToString(sum[:4]))
	return base + ".json", base + ".lock"
}

// mutex returns the Mutex of a scope's lock file.
func (s *Store) mutex(lockPath string) *lockedfile.Mutex {
	s.mu.Lock()
	defer s.mu.Unlock()
	m := s.locks[lockPath]
	if m == nil {
		m = lockedfile.NewMutex(lockPath)
		s.locks[lockPath] = m
	}
	return m
}

// update runs fn on the scope's records under the file lock and writes them back
// when fn reports a change.
func (s *Store) update(ctx context.Context, scope string, fn func(f *file, nowMs int64) (changed bool, err error)) error {
	data, lockPath := s.paths(scope)
	unlock, err := s.mutex(lockPath).Lock(ctx)
	if err != nil {
		return fmt.Errorf("lease/filestore: %w", err)
	}
	defer unlock()
	// The lock file records that the scope's file was written (marked), so that
	// the file deleted later is refused rather than taken for a new scope.
	marked, err := lockedfile.Marked(lockPath)
	if err != nil {
		return fmt.Errorf("lease/filestore: %w", err)
	}
	mark := func() error {
		if marked {
			return nil
		}
		if err := lockedfile.Mark(lockPath, lockNote); err != nil {
			return fmt.Errorf("lease/filestore: %w", err)
		}
		marked = true
		return nil
	}
	f := file{Scope: scope, Values: map[string]record{}}
	b, err := os.ReadFile(data)
	switch {
	case errors.Is(err, os.ErrNotExist):
		if marked {
			return fmt.Errorf("lease/filestore: %s is missing, but %s records that this store wrote it: it held the high-water marks of scope %q, and going on without them would trust this machine's clock alone; stop every process of the scope and restore the file from a backup, or, if the clock has not gone back since their last IDs, delete %s to start the scope with no marks",
				data, lockPath, scope, filepath.Base(lockPath))
		}
	case err != nil:
		return fmt.Errorf("lease/filestore: %w", err)
	default:
		if err := json.Unmarshal(b, &f); err != nil {
			return fmt.Errorf("lease/filestore: %s is damaged (%v); it holds the high-water marks, so restore it rather than delete it", data, err)
		}
		if f.Values == nil {
			f.Values = map[string]record{}
		}
		// A scope written by a flurry from before the mark gets it now.
		if err := mark(); err != nil {
			return err
		}
	}
	changed, err := fn(&f, time.Now().UnixMilli())
	if err != nil || !changed {
		return err
	}
	// The mark first: a crash between the two leaves a mark without a file that
	// never held a lease (refused, and explained), never a file without its mark.
	if err := mark(); err != nil {
		return err
	}
	return writeFileSync(data, &f)
}

// lockNote is what a scope's lock file says once the scope's file was written
// (lockedfile.Mark).
const lockNote = "flurry lease/filestore: this scope's .json file was written in this directory. While this file says so, a missing .json file is refused: it holds the scope's high-water marks.\n"

func writeFileSync(path string, f *file) error {
	b, err := json.MarshalIndent(f, "", " ")
	if err != nil {
		return err
	}
	if err := lockedfile.WriteAtomic(path, append(b, '\n'), 0o600); err != nil {
		return fmt.Errorf("lease/filestore: %w", err)
	}
	return nil
}

func newToken() string {
	b := make([]byte, 16)
	rand.Read(b)
	return hex.EncodeToString(b)
}

// Acquire implements lease.Store.
func (s *Store) Acquire(ctx context.Context, scope string, size int64, owner string, ttl time.Duration) (lease.Lease, error) {
	if err := leasestore.CheckAcquire(scope, size, owner, ttl); err != nil {
		return lease.Lease{}, err
	}
	var out lease.Lease
	err := s.update(ctx, scope, func(f *file, now int64) (bool, error) {
		best, bestMark := int64(-1), int64(0)
		for v := int64(0); v < size; v++ {
			r, ok := f.Values[strconv.FormatInt(v, 10)]
			if ok && r.Token != "" && r.ExpiresMs > now {
				continue // held
			}
			if best < 0 || r.Mark < bestMark {
				best, bestMark = v, r.Mark
			}
			if bestMark == 0 && !ok {
				break // a never-used value: nothing can beat it but a lower one, which came first
			}
		}
		if best < 0 {
			return false, fmt.Errorf("lease/filestore: scope %s, %d values: %w", scope, size, lease.ErrNoFreeValue)
		}
		key := strconv.FormatInt(best, 10)
		r := f.Values[key]
		r.Owner, r.Token, r.ExpiresMs = owner, newToken(), now+ttl.Milliseconds()
		r.Epoch++
		f.Values[key] = r
		out = lease.Lease{Scope: scope, Value: best, Owner: owner, Token: r.Token, Mark: r.Mark, Expires: time.UnixMilli(r.ExpiresMs).UTC(), Epoch: r.Epoch}
		return true, nil
	})
	return out, err
}

// AcquireValue implements lease.Store.
func (s *Store) AcquireValue(ctx context.Context, scope string, value int64, owner string, ttl time.Duration) (lease.Lease, error) {
	if err := leasestore.CheckAcquireValue(scope, value, owner, ttl); err != nil {
		return lease.Lease{}, err
	}
	var out lease.Lease
	err := s.update(ctx, scope, func(f *file, now int64) (bool, error) {
		key := strconv.FormatInt(value, 10)
		r := f.Values[key]
		if r.Token != "" && r.ExpiresMs > now {
			return false, fmt.Errorf("lease/filestore: scope %s, value %d: %w", scope, value, lease.ErrNoFreeValue)
		}
		r.Owner, r.Token, r.ExpiresMs = owner, newToken(), now+ttl.Milliseconds()
		r.Epoch++
		f.Values[key] = r
		out = lease.Lease{Scope: scope, Value: value, Owner: owner, Token: r.Token, Mark: r.Mark, Expires: time.UnixMilli(r.ExpiresMs).UTC(), Epoch: r.Epoch}
		return true, nil
	})
	return out, err
}

func (s *Store) live(f *file, l lease.Lease, now int64, op string) (string, record, error) {
	key := strconv.FormatInt(l.Value, 10)
	r, ok := f.Values[key]
	if !ok || r.Token == "" || r.Token != l.Token || r.ExpiresMs <= now {
		return key, r, fmt.Errorf("lease/filestore: %s %s/%d: %w", op, l.Scope, l.Value, lease.ErrLost)
	}
	return key, r, nil
}

// Renew implements lease.Store.
func (s *Store) Renew(ctx context.Context, l lease.Lease, ttl time.Duration, mark int64) (lease.Lease, error) {
	if err := leasestore.CheckTTL(ttl); err != nil {
		return l, err
	}
	return s.renew(ctx, l, ttl, mark)
}

// Pin implements lease.Pinner: Renew with a ttl of up to lease.MaxPinTTL.
func (s *Store) Pin(ctx context.Context, l lease.Lease, ttl time.Duration, mark int64) (lease.Lease, error) {
	if err := leasestore.CheckPinTTL(ttl); err != nil {
		return l, err
	}
	return s.renew(ctx, l, ttl, mark)
}

func (s *Store) renew(ctx context.Context, l lease.Lease, ttl time.Duration, mark int64) (lease.Lease, error) {
	if err := leasestore.CheckScope(l.Scope); err != nil {
		return l, err
	}
	out := l
	err := s.update(ctx, l.Scope, func(f *file, now int64) (bool, error) {
		key, r, err := s.live(f, l, now, "renew")
		if err != nil {
			return false, err
		}
		r.ExpiresMs = now + ttl.Milliseconds()
		r.Mark = max(r.Mark, mark)
		r.Epoch++
		f.Values[key] = r
		out.Mark, out.Expires, out.Epoch = r.Mark, time.UnixMilli(r.ExpiresMs).UTC(), r.Epoch
		return true, nil
	})
	return out, err
}

// Takeover implements lease.Store.
func (s *Store) Takeover(ctx context.Context, l lease.Lease, owner string, ttl time.Duration, mark int64) (lease.Lease, error) {
	if err := leasestore.CheckTakeover(l, owner, ttl); err != nil {
		return l, err
	}
	var out lease.Lease
	err := s.update(ctx, l.Scope, func(f *file, now int64) (bool, error) {
		key, r, err := s.live(f, l, now, "take over")
		if err != nil {
			return false, err
		}
		out = lease.Lease{Scope: l.Scope, Value: l.Value, Owner: owner, Token: newToken(), Mark: r.Mark}
		r.Owner, r.Token, r.ExpiresMs = owner, out.Token, now+ttl.Milliseconds()
		r.Mark = max(r.Mark, mark)
		r.Epoch++
		f.Values[key] = r
		out.Expires, out.Epoch = time.UnixMilli(r.ExpiresMs).UTC(), r.Epoch
		return true, nil
	})
	if err != nil {
		return l, err
	}
	return out, nil
}

// Release implements lease.Store.
func (s *Store) Release(ctx context.Context, l lease.Lease, mark int64) error {
	if err := leasestore.CheckScope(l.Scope); err != nil {
		return err
	}
	return s.update(ctx, l.Scope, func(f *file, now int64) (bool, error) {
		key, r, err := s.live(f, l, now, "release")
		if err != nil {
			return false, err
		}
		f.Values[key] = record{Mark: mark, Epoch: r.Epoch}
		return true, nil
	})
}

// List implements lease.Store.
func (s *Store) List(ctx context.Context, scope string) ([]lease.Record, error) {
	if err := leasestore.CheckScope(scope); err != nil {
		return nil, err
	}
	var out []lease.Record
	err := s.update(ctx, scope, func(f *file, now int64) (bool, error) {
		for key, r := range f.Values {
			v, _ := strconv.ParseInt(key, 10, 64)
			rec := lease.Record{Scope: scope, Value: v, Mark: r.Mark, Epoch: r.Epoch}
			if r.Token != "" && r.ExpiresMs > now {
				rec.Owner, rec.Token, rec.Held, rec.Expires = r.Owner, r.Token, true, time.UnixMilli(r.ExpiresMs).UTC()
			}
			out = append(out, rec)
		}
		return false, nil
	})
	sort.Slice(out, func(i, j int) bool { return out[i].Value < out[j].Value })
	return out, err
}

// Scopes lists the scopes that have a file in the store's directory.
func (s *Store) Scopes() ([]string, error) {
	matches, err := filepath.Glob(filepath.Join(s.dir, "*.json"))
	if err != nil {
		return nil, err
	}
	var out []string
	for _, m := range matches {
		b, err := os.ReadFile(m)
		if err != nil {
			continue
		}
		var f file
		if json.Unmarshal(b, &f) == nil && f.Scope != "" {
			out = append(out, f.Scope)
		}
	}
	sort.Strings(out)
	return out, nil
}

// Close implements lease.Store; the file store holds nothing open between calls.
func (s *Store) Close() error { return nil }

// Identity is private: only the processes of this machine can use the directory,
// and a server with a data directory of its own leases the same values. Its ID is
// the host and a random value kept in the directory's identity file.
func (s *Store) Identity(context.Context) (lease.StoreIdentity, error) {
	id, err := storeid.File(s.dir)
	if err != nil {
		return lease.StoreIdentity{}, fmt.Errorf("lease/filestore: %w", err)
	}
	return lease.StoreIdentity{ID: id, Private: true}, nil
}
