package nodepool

import (
	"errors"
	"strings"
	"testing"

	"github.com/flurryid/flurry/layout"
)

func twitter(t *testing.T) *layout.Layout {
	t.Helper()
	l, err := layout.Lookup("twitter")
	if err != nil {
		t.Fatal(err)
	}
	return l
}

// TestPlanOneField leases the worker with the datacenter fixed: 32 values, the
// datacenter in the scope suffix, and each value in the worker field alone.
func TestPlanOneField(t *testing.T) {
	p, err := Plan(of(twitter(t)), []string{"worker"}, layout.NodeValues{3})
	if err != nil {
		t.Fatal(err)
	}
	if p.Size != 32 || p.Fixed != "/datacenter=3" {
		t.Fatalf("size %d, fixed %q; want 32, /datacenter=3", p.Size, p.Fixed)
	}
	for v := int64(0); v < p.Size; v++ {
		if nv := p.NodeOf(layout.NodeValues{3}, v); nv[0] != 3 || nv[1] != v {
			t.Fatalf("value %d: node %v; want datacenter 3, worker %d", v, nv[:2], v)
		}
	}
}

// TestPlanAllFields leases both fields: the first named takes the high bits, so
// every value of the pool is a different pair and none is left out.
func TestPlanAllFields(t *testing.T) {
	p, err := Plan(of(twitter(t)), nil, layout.NodeValues{})
	if err != nil {
		t.Fatal(err)
	}
	if p.Size != 1024 || p.Fixed != "" {
		t.Fatalf("size %d, fixed %q; want 1024 and no fixed field", p.Size, p.Fixed)
	}
	seen := map[[2]int64]bool{}
	for v := int64(0); v < p.Size; v++ {
		nv := p.NodeOf(layout.NodeValues{}, v)
		if nv[0] != v>>5 || nv[1] != v&31 {
			t.Fatalf("value %d: node %v; want datacenter %d, worker %d", v, nv[:2], v>>5, v&31)
		}
		seen[[2]int64{nv[0], nv[1]}] = true
	}
	if len(seen) != 1024 {
		t.Fatalf("%d distinct nodes from 1024 values", len(seen))
	}
}

func TestPlanRefuses(t *testing.T) {
	l := twitter(t)
	if _, err := Plan(of(l), []string{"shard"}, layout.NodeValues{}); err == nil || !strings.Contains(err.Error(), `no node field "shard"`) {
		t.Errorf("unknown field: %v", err)
	}
	var given *GivenError
	if _, err := Plan(of(l), []string{"worker"}, layout.NodeValues{0, 4}); !errors.As(err, &given) || given.Field != "worker" {
		t.Errorf("leased field given a value: %v", err)
	}
	if _, err := Plan(of(l), []string{"worker"}, layout.NodeValues{32}); err == nil {
		t.Error("a datacenter of 32 in 5 bits was accepted")
	}
	wide, err := layout.Parse("time:39:1ms:2025-01-01,a:12,b:11,seq:1")
	if err != nil {
		t.Fatal(err)
	}
	var w *WideError
	if _, err := Plan(of(wide), nil, layout.NodeValues{}); !errors.As(err, &w) || w.Bits != 23 {
		t.Errorf("23 leased bits: %v", err)
	}
}

func of(l *layout.Layout) Layout {
	var fields []Field
	for _, f := range l.NodeFields() {
		fields = append(fields, Field{Name: f.Name, Bits: f.Bits})
	}
	return Layout{Name: l.String(), Fields: fields, Check: func(v Values) error { return l.CheckNodeValues(v) }}
}
