// Package memstore keeps segment counters in memory: for tests and for the
// deterministic simulation (verify/sim). It is a complete segment.Store, held to
// the conformance suite segmenttest like the engines' stores, but it keeps nothing
// when the process ends: never use it to issue IDs that are stored.
package memstore

import (
	"context"
	"fmt"
	"sort"
	"sync"
	"time"

	"github.com/flurryid/flurry/internal/storeid"
	"github.com/flurryid/flurry/segment"
	"github.com/flurryid/flurry/segment/segmentstore"
)

// Store is a segment.Store in memory. Its zero value is not usable; call New.
type Store struct {
	mu     sync.Mutex
	tags   map[string]*tag
	closed bool
	id     string // Identity's, made on its first call
}

type tag struct {
	t        segment.Tag
	returned []segment.Block // by First
}

// New returns an empty store.
func New() *Store { return &Store{tags: map[string]*tag{}} }

func (s *Store) get(name string) (*tag, error) {
	if s.closed {
		return nil, fmt.Errorf("segment/memstore: store closed")
	}
	t := s.tags[name]
	if t == nil {
		return nil, fmt.Errorf("%w %q: create it first (flurry segment create URL %s)", segment.ErrUnknownTag, name, name)
	}
	return t, nil
}

// Take implements segment.Store.
func (s *Store) Take(ctx context.Context, name string, n, floor, limit int64) (segment.Block, error) {
	limit, err := segmentstore.CheckTake(name, n, floor, limit)
	if err != nil {
		return segment.Block{}, err
	}
	if err := ctx.Err(); err != nil {
		return segment.Block{}, err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	t, err := s.get(name)
	if err != nil {
		return segment.Block{}, err
	}
	for i, b := range t.returned {
		if b.First > floor {
			t.returned = append(t.returned[:i], t.returned[i+1:]...)
			b.Step, b.Returned = t.t.Step, true
			return b, nil
		}
	}
	b, err := segmentstore.FreshBlock(t.t.Max, floor, n, limit)
	if err != nil {
		return segment.Block{}, fmt.Errorf("segment/memstore: tag %q: %w", name, err)
	}
	t.t.Max = b.Last
	t.t.Updated = time.Now()
	b.Step = t.t.Step
	return b, nil
}

// Return implements segment.Store.
func (s *Store) Return(ctx context.Context, name string, b segment.Block) error {
	if err := segmentstore.CheckReturn(name, b); err != nil {
		return err
	}
	if err := ctx.Err(); err != nil {
		return err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	t, err := s.get(name)
	if err != nil {
		return err
	}
	b.Step, b.Returned = 0, false
	i := sort.Search(len(t.returned), func(i int) bool { return t.returned[i].First > b.First })
	t.returned = append(t.returned, segment.Block{})
	copy(t.returned[i+1:], t.returned[i:])
	t.returned[i] = b
	return nil
}

// Create implements segment.Store.
func (s *Store) Create(ctx context.Context, t segment.Tag) error {
	if err := segmentstore.CheckCreate(t); err != nil {
		return err
	}
	if err := ctx.Err(); err != nil {
		return err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return fmt.Errorf("segment/memstore: store closed")
	}
	if s.tags[t.Name] != nil {
		return fmt.Errorf("segment/memstore: %w: %q", segment.ErrTagExists, t.Name)
	}
	t.Returned = 0
	t.Updated = time.Now()
	s.tags[t.Name] = &tag{t: t}
	return nil
}

// SetStep implements segment.Store.
func (s *Store) SetStep(ctx context.Context, name string, step int64) error {
	if err := segmentstore.CheckSetStep(name, step); err != nil {
		return err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	t, err := s.get(name)
	if err != nil {
		return err
	}
	t.t.Step = step
	return nil
}

// Tags implements segment.Store.
func (s *Store) Tags(ctx context.Context) ([]segment.Tag, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return nil, fmt.Errorf("segment/memstore: store closed")
	}
	out := make([]segment.Tag, 0, len(s.tags))
	for _, t := range s.tags {
		x := t.t
		for _, b := range t.returned {
			x.Returned += b.Len()
		}
		out = append(out, x)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out, nil
}

// Close implements segment.Store: later calls fail.
func (s *Store) Close() error {
	s.mu.Lock()
	s.closed = true
	s.mu.Unlock()
	return nil
}

// Identity is private: the store lives in this process only. Its ID is random,
// made on the first call.
func (s *Store) Identity(context.Context) (segment.StoreIdentity, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.id == "" {
		s.id = "mem:" + storeid.Random()
	}
	return segment.StoreIdentity{ID: s.id, Private: true}, nil
}
