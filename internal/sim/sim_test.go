package sim

import (
	"testing"
	"time"
)

func TestLeaseSmoke(t *testing.T) {
	cfg := DefaultLeaseConfig()
	cfg.Seed = 1
	cfg.Nodes = 200
	cfg.Duration = 10 * time.Minute
	w, err := NewLeaseWorld(cfg)
	if err != nil {
		t.Fatal(err)
	}
	r := w.Run()
	t.Log(r.Summary())
	for _, v := range r.Violations {
		t.Error(v)
	}
}
