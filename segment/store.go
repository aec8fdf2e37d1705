package segment

import (
	"context"
	"errors"
	"fmt"
	"time"
)

var (
	// ErrUnknownTag is returned when a tag has not been created in the store. Create
	// it with Store.Create (flurry segment create URL TAG) first.
	ErrUnknownTag = errors.New("segment: unknown tag")
	// ErrTagExists is returned by Store.Create when the tag exists already; change its
	// step with Store.SetStep instead.
	ErrTagExists = errors.New("segment: tag exists already")
	// ErrUnavailable is returned by Allocator.Next when every buffered ID is used and
	// no store could hand out a new range. It wraps the store's last error; the
	// allocator keeps trying in the background and serves again once a store answers.
	ErrUnavailable = errors.New("segment: no IDs buffered and no store answers")
	// ErrClosed is returned by Allocator.Next after Close.
	ErrClosed = errors.New("segment: allocator closed")
	// ErrExhausted is returned by Store.Take when the tag's counter would pass the
	// largest value the store can keep (2^63-1 divided by the number of residue
	// classes), and by the Allocator once every store is exhausted. No ID of the tag
	// can be issued any more: move to a new tag.
	ErrExhausted = errors.New("segment: the tag's counter is exhausted")
)

// Classes of a store's failure, for callers that must say what went wrong
// without quoting the database, whose messages may name hosts and users: a
// store marks its errors with one of these (errors.Is) when it can tell.
var (
	// ErrStoreDenied marks a login or a statement the database refused for want
	// of a privilege.
	ErrStoreDenied = errors.New("segment: the database refused access")
	// ErrStoreNoTable marks a statement on a table that does not exist.
	ErrStoreNoTable = errors.New("segment: the table does not exist")
	// ErrStoreUnreachable marks a database that could not be reached or did not
	// answer.
	ErrStoreUnreachable = errors.New("segment: the database did not answer")
)

// A Block is a run of counter values a store handed to one allocator: First to Last,
// both included. Counter values are mapped to IDs by the allocator (see Options.Stores):
// with a single store an ID is the counter value itself, as in Leaf's leaf_alloc.
type Block struct {
	First, Last int64
	// Step is the tag's configured step in the store when the block was taken, so
	// that allocators pick up a changed step (Store.SetStep) with their next range.
	Step int64
	// Returned is true when the block is the unused tail of an earlier range, handed
	// back by an allocator that closed gracefully (Store.Return).
	Returned bool
}

// Len is the number of counter values in b.
func (b Block) Len() int64 { return b.Last - b.First + 1 }

// Tag describes one tag of a store, for listings.
type Tag struct {
	Name string
	// Max is the highest counter value ever handed out (Leaf's max_id); the next
	// fresh block starts above it.
	Max int64
	// Step is the configured step: the smallest range an allocator takes, and the
	// starting point of its dynamic step.
	Step int64
	// Description is free text for people.
	Description string
	// Updated is when the tag's row last changed, by the store's clock; zero when the
	// store does not keep it.
	Updated time.Time
	// Returned is how many counter values are handed back and wait to be claimed.
	Returned int64
}

// TinyIDSegment is a range as didi tinyid's nextSegmentId hands it to its
// clients: IDs in (CurrentID, MaxID] with id % Delta == Remainder; a client loads
// the next range once it reaches LoadingID. The store of tinyid's own tables
// (segment/sqlstore's TinyID) takes them, and flurry's server serves them on
// tinyid's routes.
type TinyIDSegment struct {
	CurrentID, LoadingID, MaxID, Delta, Remainder int64
}

// LeafAlloc is one row of Meituan Leaf's leaf_alloc as Leaf's server reads it for
// its /db page (IDAllocMapper.getAllLeafAllocs): MaxID is max_id as stored (the
// next value), and UpdateTime is update_time as Leaf shows it, the database's
// wall clock written as java.sql.Timestamp.toString writes it
// ("2019-09-06 09:35:00.0"). The store of Leaf's table (segment/sqlstore's
// LeafTable) lists them, and flurry's server shows them on /db.
type LeafAlloc struct {
	Tag        string
	MaxID      int64
	Step       int64
	UpdateTime string
}

// Store hands out blocks of counter values per tag. Implementations must be safe for
// concurrent use, and Take and Return must be atomic in the store: two callers, in
// any processes on any machines, never receive overlapping blocks. They check their
// arguments with package segmentstore.
type Store interface {
	// Take claims counter values of tag for the caller. If a returned block whose
	// First is above floor waits, Take claims the lowest such block whole, whatever
	// its length, and removes it from the store. Otherwise it claims the n values
	// above max(Max, floor) and raises Max to the last of them: a caller passes the
	// highest value it ever held as floor, so its blocks strictly increase even when
	// it alternates between stores. Take returns an error wrapping ErrUnknownTag for
	// a tag that was not created, and ErrExhausted when Max would pass limit
	// (the caller's largest usable counter value; 0 means 2^63-1).
	Take(ctx context.Context, tag string, n, floor, limit int64) (Block, error)
	// Return hands the unused values First..Last of a block back to the store, to be
	// claimed by a later Take. The caller must not use them any more.
	Return(ctx context.Context, tag string, b Block) error
	// Create makes a new tag whose counter starts at start (the first fresh block
	// begins at start+1) with the given step. It returns an error wrapping
	// ErrTagExists when the tag exists.
	Create(ctx context.Context, t Tag) error
	// SetStep changes a tag's configured step. Running allocators take the new step
	// as their minimum with their next range.
	SetStep(ctx context.Context, tag string, step int64) error
	// Tags lists the tags of the store, by name.
	Tags(ctx context.Context) ([]Tag, error)
	// Close releases the store's connections.
	Close() error
}

// MaxStep is the largest step a tag can be created with or set to.
const MaxStep = 1 << 40

// checkTagName is segmentstore.CheckTagName (which imports this package), for
// Options.Tag, so that New refuses a bad tag before any store call.
// TestTagNameChecksAgree holds the two to one rule.
func checkTagName(tag string) error {
	if tag == "" || len(tag) > 128 {
		return fmt.Errorf("segment: tag %q must have 1 to 128 characters", tag)
	}
	for _, c := range tag {
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '_' || c == '-' || c == '.' || c == ':' || c == '/') {
			return fmt.Errorf("segment: tag %q: use ASCII letters, digits and _-.:/ only", tag)
		}
	}
	return nil
}
