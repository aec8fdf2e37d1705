package memstore_test

import (
	"testing"

	"github.com/flurryid/flurry/segment"
	"github.com/flurryid/flurry/segment/memstore"
	"github.com/flurryid/flurry/verify/segmenttest"
)

// Every store the suite opens is a connection to one memory, as separate connections
// to one engine would be; the suite's tags are fresh per test.
func TestConformance(t *testing.T) {
	backend := memstore.New()
	segmenttest.Run(t, func(t *testing.T) segment.Store { return view{backend} })
}

// view is a connection to the shared store: its Close does not close the backend.
type view struct{ *memstore.Store }

func (view) Close() error { return nil }
