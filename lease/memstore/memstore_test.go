package memstore_test

import (
	"testing"

	"github.com/flurryid/flurry/lease"
	"github.com/flurryid/flurry/lease/memstore"
	"github.com/flurryid/flurry/verify/leasetest"
)

// Every store the suite opens is a connection to one memory, as separate connections
// to one engine would be; the suite's scopes are fresh per test.
func TestConformance(t *testing.T) {
	backend := memstore.New(nil)
	leasetest.Run(t, func(t *testing.T) lease.Store { return view{backend} })
}

// view is a connection to the shared store: its Close does not close the backend.
type view struct{ *memstore.Store }

func (view) Close() error { return nil }
