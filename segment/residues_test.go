package segment_test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	flurry "github.com/flurryid/flurry"
	"github.com/flurryid/flurry/segment"
	"github.com/flurryid/flurry/segment/memstore"
)

// TestRegionsAsResidueClasses: two regions serve one tag from stores of their
// own, region A's two as residues 0 and 1 of 4, region B's two as 2 and 3. The
// regions never talk; their IDs never collide, and each store's IDs are in its
// class. A store of each region fails over to the other one of the region.
func TestRegionsAsResidueClasses(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	region := func(residues ...int64) (*segment.Allocator, []*memstore.Store) {
		var stores []segment.Store
		var mem []*memstore.Store
		for range residues {
			st := memstore.New()
			if err := st.Create(ctx, segment.Tag{Name: "orders", Step: 50}); err != nil {
				t.Fatal(err)
			}
			stores, mem = append(stores, st), append(mem, st)
		}
		a, err := segment.New(ctx, segment.Options{Stores: stores, Residues: residues, Modulus: 4, Tag: "orders"})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { a.Close(context.Background()) })
		return a, mem
	}
	a, _ := region(0, 1)
	b, _ := region(2, 3)
	seen := map[flurry.ID]string{}
	classes := map[string]map[int64]bool{"A": {}, "B": {}}
	take := func(name string, al *segment.Allocator, n int) {
		var last flurry.ID
		for range n {
			id, err := al.Next(ctx)
			if err != nil {
				t.Fatal(err)
			}
			if id <= last {
				t.Fatalf("region %s: %d after %d", name, id, last)
			}
			last = id
			if other, dup := seen[id]; dup {
				t.Fatalf("ID %d from region %s and region %s", id, other, name)
			}
			seen[id] = name
			classes[name][int64(id)%4] = true
		}
	}
	for range 20 {
		take("A", a, 37)
		take("B", b, 41)
	}
	for name, want := range map[string][]int64{"A": {0, 1}, "B": {2, 3}} {
		for r := range classes[name] {
			if r != want[0] && r != want[1] {
				t.Fatalf("region %s issued an ID of residue %d; its residues are %v", name, r, want)
			}
		}
	}
}

func TestResiduesChecked(t *testing.T) {
	ctx := context.Background()
	st := memstore.New()
	if err := st.Create(ctx, segment.Tag{Name: "orders", Step: 10}); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		residues []int64
		modulus  int64
		want     string
	}{
		{[]int64{0, 0}, 4, "both have residue 0"},
		{[]int64{4, 1}, 4, "outside 0..3"},
		{[]int64{1}, 4, "1 residues for 2 stores"},
		{nil, 1, "modulus 1 must be from the number of stores, 2"},
		{[]int64{0, 1}, 2000, "to 1024"},
	} {
		_, err := segment.New(ctx, segment.Options{Stores: []segment.Store{st, st}, Residues: tc.residues, Modulus: tc.modulus, Tag: "orders"})
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("residues %v mod %d: got %v; want %q", tc.residues, tc.modulus, err, tc.want)
		}
	}
	if _, _, err := segment.CheckResidues(2, []int64{3, 1}, 4); err != nil {
		t.Fatal(errors.Unwrap(err), err)
	}
}
