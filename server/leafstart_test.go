package server

import (
	"strconv"
	"testing"
	"time"

	"github.com/flurryid/flurry/clock"
)

// TestLeafSnowflakeSpreadsLowRate: a namespace set up as docs/migrating.md's Leaf
// snowflake section has it (the leaf layout, nothing said about the sequence start)
// starts each millisecond's sequence at a random value below 100, as Leaf's
// SnowflakeIDGenImpl does, so IDs issued one per millisecond through Leaf's route
// spread over id % 16 instead of all being multiples of 4096. An explicit
// start: zero still gets zero.
func TestLeafSnowflakeSpreadsLowRate(t *testing.T) {
	const n = 1600
	spread := func(t *testing.T, yaml string) [16]int {
		clk := clock.NewManual(time.Now())
		_, hs := newServer(t, yaml, clk)
		var buckets [16]int
		for i := 0; i < n; i++ {
			clk.Add(time.Millisecond) // one ID per millisecond: the low rate
			code, _, body := get(t, hs.URL+"/api/snowflake/get/default")
			id, err := strconv.ParseInt(body, 10, 64)
			if code != 200 || err != nil {
				t.Fatalf("/api/snowflake/get/default: %d %q", code, body)
			}
			if seq := id & 4095; seq >= 100 {
				t.Fatalf("ID %d has sequence %d; Leaf's start is below 100 and one ID per millisecond takes no further", id, seq)
			}
			buckets[id%16]++
		}
		return buckets
	}
	for name, yaml := range map[string]string{
		"leaf defaults": "namespaces:\n  default:\n    strategy: snowflake\n    snowflake:\n      layout: leaf\n",
		"random_below":  "namespaces:\n  default:\n    strategy: snowflake\n    snowflake:\n      layout: leaf\n      random_below: 100\n",
	} {
		t.Run(name, func(t *testing.T) {
			b := spread(t, yaml)
			// Starts below 100 spread over the 16 residues nearly evenly (6 or 7 of
			// every 100 values each): n/16 = 100 per residue, give or take chance.
			for r, c := range b {
				if c < n/16/3 || c > n/16*3 {
					t.Fatalf("id %% 16: %v; residue %d has %d of %d IDs, so low-rate IDs do not spread as Leaf's do", b, r, c, n)
				}
			}
		})
	}
	t.Run("explicit zero", func(t *testing.T) {
		b := spread(t, "namespaces:\n  default:\n    strategy: snowflake\n    snowflake:\n      layout: leaf\n      start: zero\n")
		if b[0] != n {
			t.Fatalf("id %% 16: %v; start: zero must start every millisecond at sequence 0", b)
		}
	})
}
