package main

import (
	"encoding/json"
	"regexp"
	"strings"
	"testing"

	"github.com/flurryid/flurry/layout"
)

// The classic hand-sized example: 10 years, 100k IDs/s per machine, 4 datacenters x
// 100 machines x 10 business lines: 39 + 2 + 7 + 4 + 7 bits, and of the 4 spare bits 1
// goes to time (twice the years asked) and 3 to seq (rate headroom).
func handSizedPlan() []string {
	return []string{"plan", "--years", "10", "--rate", "100000", "--node", "datacenter=4", "--node", "machine=100", "--node", "line=10"}
}

func TestPlanHandSized(t *testing.T) {
	r := cli(t, "", handSizedPlan()...)
	if r.code != 0 || r.stderr != "" {
		t.Fatalf("plan: %+v", r)
	}
	out := lines(r.stdout)
	if !regexp.MustCompile(`^time:40:1ms:\d{4}-\d\d-\d\dT00:00:00Z,datacenter:2,machine:7,line:4,seq:10$`).MatchString(out[0]) {
		t.Errorf("first line %q is not the hand-sized layout (time 40, datacenter 2, machine 7, line 4, seq 10 bits)", out[0])
	}
	if _, err := layout.Parse(out[0]); err != nil {
		t.Errorf("proposed layout does not parse: %v", err)
	}
	for _, want := range []string{
		"\nwhy:\n  time: 39 bits of 1ms",
		"  machine: 7 bits hold 128 values (100 needed)\n",
		"  spare: 1 bit to time, for a lifetime of at least twice the 10 years asked",
		"  spare: 3 bits to seq, for 1024000 IDs/s per node, 10.2x the peak asked",
		"\nfacts:\n",
		"  ids/s per node: 1,024,000\n",
		"  nodes:          8,192\n",
	} {
		if !strings.Contains(r.stdout, want) {
			t.Errorf("output lacks %q:\n%s", want, r.stdout)
		}
	}

	r = cli(t, "", append(handSizedPlan(), "--json", "--epoch", "2026-01-01")...)
	var got struct {
		Layout    string       `json:"layout"`
		Spare     int          `json:"spare_bits"`
		Reasoning []string     `json:"reasoning"`
		Facts     layout.Facts `json:"facts"`
	}
	if err := json.Unmarshal([]byte(r.stdout), &got); err != nil || r.code != 0 {
		t.Fatalf("plan --json: %v, %+v", err, r)
	}
	if want := "time:40:1ms:2026-01-01T00:00:00Z,datacenter:2,machine:7,line:4,seq:10"; got.Layout != want || got.Spare != 4 || len(got.Reasoning) != 7 || got.Facts.Layout != want || got.Facts.RatePerNode != 1024000 {
		t.Errorf("plan --json = %+v, want layout %s with 4 spare bits", got, want)
	}
}

func TestPlanOptions(t *testing.T) {
	r := cli(t, "", "plan", "--years", "30", "--rate", "1_000", "--unit", "100ms", "--node", "worker=64", "--js-safe", "--json")
	var got struct {
		Facts layout.Facts `json:"facts"`
	}
	if err := json.Unmarshal([]byte(r.stdout), &got); err != nil || got.Facts.Bits != 53 || !got.Facts.JSSafe || got.Facts.Unit != "100ms" {
		t.Errorf("--js-safe plan: %+v, %v (%+v)", got.Facts, err, r)
	}
	r = cli(t, "", "plan", "--years", "20", "--rate", "1e5", "--nodes", "1e3", "--epoch", "1767225600000")
	if r.code != 0 || !strings.HasPrefix(r.stdout, "time:41:1ms:2026-01-01T00:00:00Z,node:10,seq:12\n") {
		t.Errorf("--nodes plan: %+v", r)
	}
}

func TestPlanErrors(t *testing.T) {
	// 93 years, 2^20 servers and 65536 IDs per ms (a game-server wish list) need 78 bits.
	r := cli(t, "", "plan", "--years", "93", "--rate", "65536000", "--node", "server=1048576")
	wantOneLineError(t, r, 1, "layout: requirements do not fit: 78 bits needed (time 42 + server 20 + seq 16) but 63 fit", "at most 32 nodes in all")
	wantOneLineError(t, cli(t, "", "plan", "--years", "93", "--rate", "65536000", "--node", "server=1048576", "--json"), 1, "do not fit")
	wantOneLineError(t, cli(t, "", "plan", "--years", "1", "--rate", "5", "--epoch", "2999-01-01"), 1, "is in the future")
	wantOneLineError(t, cli(t, "", "plan", "--years", "1", "--rate", "5", "--unit", "1us"), 1, "not a whole positive number of milliseconds")
	wantOneLineError(t, cli(t, "", "plan", "--years", "0", "--rate", "5"), 1, "years 0 must be more than 0")
	wantOneLineError(t, cli(t, "", "plan", "--years", "1", "--rate", "5", "--node", "dc=0"), 1, `node field "dc" needs a count of at least 1`)
}
