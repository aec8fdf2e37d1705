// Package segmentstore helps implement a [segment.Store], as database/sql/driver
// helps implement a database driver: it holds the checks every store makes of its
// arguments, so that all stores accept and refuse the same calls with the same
// messages, and the arithmetic of a fresh block. Users of package segment do not
// need it; store packages call it first in each method, and the conformance suite
// (package segmenttest) holds them to it.
package segmentstore

import (
	"fmt"

	"github.com/flurryid/flurry/segment"
)

// CheckTagName reports whether a tag name is acceptable to every store: 1 to 128
// bytes (Leaf's biz_tag is varchar(128)) of ASCII letters, digits and "_-.:/".
func CheckTagName(tag string) error {
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

// CheckStep reports whether step is a usable configured step: from 1 to
// segment.MaxStep.
func CheckStep(step int64) error {
	if step < 1 || step > segment.MaxStep {
		return fmt.Errorf("segment: step %d must be from 1 to %d", step, int64(segment.MaxStep))
	}
	return nil
}

// CheckSetStep validates SetStep's arguments the same way for every store.
func CheckSetStep(tag string, step int64) error {
	if err := CheckTagName(tag); err != nil {
		return err
	}
	return CheckStep(step)
}

// CheckCreate validates Create's argument the same way for every store.
func CheckCreate(t segment.Tag) error {
	if err := CheckTagName(t.Name); err != nil {
		return err
	}
	if err := CheckStep(t.Step); err != nil {
		return err
	}
	if t.Max < 0 {
		return fmt.Errorf("segment: tag %q: start %d must not be negative", t.Name, t.Max)
	}
	if len(t.Description) > 256 {
		return fmt.Errorf("segment: tag %q: description has %d bytes, at most 256 fit", t.Name, len(t.Description))
	}
	return nil
}

// CheckTake validates Take's arguments the same way for every store and returns the
// effective limit (limit 0 means 2^63-1).
func CheckTake(tag string, n, floor, limit int64) (int64, error) {
	if err := CheckTagName(tag); err != nil {
		return 0, err
	}
	if n < 1 || n > segment.MaxStep {
		return 0, fmt.Errorf("segment: take of %d values: must be from 1 to %d", n, int64(segment.MaxStep))
	}
	if floor < 0 {
		return 0, fmt.Errorf("segment: take with floor %d: must not be negative", floor)
	}
	if limit == 0 {
		limit = 1<<63 - 1
	}
	if limit < 1 {
		return 0, fmt.Errorf("segment: take with limit %d: must be positive (0 for no limit)", limit)
	}
	return limit, nil
}

// CheckReturn validates Return's arguments the same way for every store.
func CheckReturn(tag string, b segment.Block) error {
	if err := CheckTagName(tag); err != nil {
		return err
	}
	if b.First < 1 || b.Last < b.First {
		return fmt.Errorf("segment: return of %d..%d to tag %q: not a block", b.First, b.Last, tag)
	}
	return nil
}

// FreshBlock computes the block a Take claims when no returned block fits: n values
// above max(max, floor), with limit as the largest allowed value, or an error
// wrapping segment.ErrExhausted. Stores whose engine can run Go-side logic inside a
// transaction use it; others repeat it in their language (the Redis store's script)
// and are held to it by the conformance suite.
func FreshBlock(max, floor, n, limit int64) (segment.Block, error) {
	base := max
	if floor > base {
		base = floor
	}
	if base > limit-n {
		return segment.Block{}, fmt.Errorf("%w: taking %d values above %d passes %d", segment.ErrExhausted, n, base, limit)
	}
	return segment.Block{First: base + 1, Last: base + n}, nil
}
