package segment_test

import (
	"strings"
	"testing"

	"github.com/flurryid/flurry/segment"
	"github.com/flurryid/flurry/segment/segmentstore"
)

// An allocator refuses exactly the tag names every store refuses, with the same
// message: package segment keeps its own copy of that check of package
// segmentstore, which imports segment.
func TestTagNameChecksAgree(t *testing.T) {
	for _, tag := range []string{"", "a", "orders", "a-b_c.d:e/f", "has space", "k=v", "é", "a\x00", strings.Repeat("t", 128), strings.Repeat("t", 129)} {
		a, b := segment.AllocatorCheckTagName(tag), segmentstore.CheckTagName(tag)
		if (a == nil) != (b == nil) || a != nil && a.Error() != b.Error() {
			t.Errorf("tag %q: the allocator says %v, the stores %v", tag, a, b)
		}
	}
}
