package server

import (
	"context"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/flurryid/flurry/clock"
	"github.com/flurryid/flurry/internal/zkconn"
	"github.com/flurryid/flurry/server/config"
	"github.com/flurryid/flurry/verify/conformance"
	"github.com/flurryid/flurry/verify/testenv"
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

// TestLeafZooKeeperNamespace: the configuration docs/migrating.md gives for
// replacing a Leaf snowflake server in place (layout leaf, a leafzk:// store with
// the server's address) registers the address in Leaf's ZooKeeper registry as
// Leaf would and serves Leaf's route with the node's worker ID. A leafzk:// store
// with another layout is refused: its IDs must have Leaf's bits.
func TestLeafZooKeeperNamespace(t *testing.T) {
	testenv.NeedScheme(t, "leafzk")
	o, err := zkconn.ParseURL(testenv.ZooKeeper.URL(t), "test")
	if err != nil {
		t.Fatal(err)
	}
	name := "servertest." + conformance.Suffix()
	store := "leafzk://" + strings.Join(o.Servers, ",") + "/" + name + "?addr=10.9.0.1:8080"
	yaml := "namespaces:\n  default:\n    strategy: snowflake\n    snowflake:\n      layout: leaf\n      lease:\n        store: \"" + store + "\"\n"
	c, err := zkconn.Open(context.Background(), zkconn.Options{Servers: o.Servers, Prefix: "snowflake/" + name}, zkconn.Kind{Package: "test"})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { // after the server's: the test's registry, forever and flurry with a node each
		defer c.Close()
		ctx := context.Background()
		for _, dir := range []string{c.Prefix + "/forever", c.Prefix + "/flurry"} {
			kids, _ := c.Children(ctx, dir)
			for _, k := range kids {
				c.Delete(ctx, dir+"/"+k, -1)
			}
			c.Delete(ctx, dir, -1)
		}
		c.Delete(ctx, c.Prefix, -1)
	})
	_, hs := newServer(t, yaml, nil)
	nodes, err := c.Children(context.Background(), c.Prefix+"/forever")
	if err != nil || len(nodes) != 1 || nodes[0] != "10.9.0.1:8080-0000000000" {
		t.Fatalf("Leaf's registry holds %v, %v; want the node 10.9.0.1:8080-0000000000", nodes, err)
	}
	for range 10 {
		code, _, body := get(t, hs.URL+"/api/snowflake/get/default")
		id, err := strconv.ParseInt(body, 10, 64)
		if code != 200 || err != nil || id>>12&1023 != 0 {
			t.Fatalf("/api/snowflake/get/default: %d %q; want an ID of worker 0", code, body)
		}
	}

	_, err = config.Parse("c.yaml", []byte(strings.Replace(yaml, "layout: leaf", "layout: twitter", 1)), nil)
	if err == nil || !strings.Contains(err.Error(), "use layout: leaf") {
		t.Fatalf("a leafzk:// store with the twitter layout: %v; want it refused", err)
	}
}
