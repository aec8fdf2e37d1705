package layout

import (
	"errors"
	"strings"
	"testing"
	"time"
)

func TestPlanHandSized(t *testing.T) {
	// The classic hand-sized example: 10 years, 100k IDs/s per machine, 4 datacenters
	// x 100 machines x 10 business lines: 39 + 2 + 7 + 4 + 7 = 59 bits by hand.
	now := time.Date(2026, 11, 22, 15, 0, 0, 0, time.UTC)
	p, err := plan(Requirements{Years: 10, Rate: 100000, Nodes: []NodeNeed{{"datacenter", 4}, {"machine", 100}, {"line", 10}}}, now)
	if err != nil {
		t.Fatal(err)
	}
	// Spare bits: 1 to time (17.4 years to 34.8, twice the 10 asked), 3 to seq
	// (128,000 IDs/s to 1,024,000, 10x the peak asked).
	want := "time:40:1ms:2026-11-22T00:00:00Z,datacenter:2,machine:7,line:4,seq:10"
	if got := p.Layout.String(); got != want || p.Spare != 4 {
		t.Errorf("plan = %s (spare %d), want %s (spare 4)", got, p.Spare, want)
	}
	if len(p.Reasoning) != 7 || !strings.Contains(p.Reasoning[0], "time: 39 bits") ||
		!strings.Contains(p.Reasoning[5], "spare: 1 bit to time, for a lifetime of at least twice the 10 years asked") ||
		!strings.Contains(p.Reasoning[6], "spare: 3 bits to seq, for 1024000 IDs/s per node, 10.2x the peak asked") {
		t.Errorf("reasoning %q", p.Reasoning)
	}
	f := p.Layout.Facts(now)
	if f.RatePerNode < 10*100000 || f.Nodes < 4*100*10 || f.YearsLeft < 2*10 || f.YearsLeft > 4*10 {
		t.Errorf("plan does not meet its requirements: %+v", f)
	}
}

func TestPlanDoesNotFit(t *testing.T) {
	// 93 years, 2^20 servers and 65536 IDs per ms (a game-server wish list) need 78 bits.
	_, err := plan(Requirements{Years: 93, Rate: 65536000, Nodes: []NodeNeed{{"server", 1 << 20}}}, time.Now())
	if !errors.Is(err, ErrDoesNotFit) {
		t.Fatalf("err = %v, want ErrDoesNotFit", err)
	}
	for _, want := range []string{"78 bits needed (time 42 + server 20 + seq 16) but 63 fit, 15 too many", "at most 32 nodes in all", "a peak of at most 2000 IDs/s per node", "a life of at most 1.55 days"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error %q lacks %q", err, want)
		}
	}
}

func TestPlanJSSafeAndDefaults(t *testing.T) {
	p, err := Plan(Requirements{Years: 30, Rate: 1000, Unit: 100 * time.Millisecond, Nodes: []NodeNeed{{"worker", 64}}, JSSafe: true})
	if err != nil {
		t.Fatal(err)
	}
	if p.Layout.Bits() != 53 || !p.Layout.Facts(time.Now()).JSSafe {
		t.Errorf("JS-safe plan %s has %d bits", p.Layout, p.Layout.Bits())
	}
	p, err = Plan(Requirements{Years: 1, Rate: 1})
	if err != nil || p.Layout.NodeFields()[0].Name != "node" || p.Layout.Nodes() != 1024 {
		t.Errorf("default nodes: %v, %v", p, err)
	}
	for _, r := range []Requirements{{Years: 0, Rate: 1}, {Years: 1, Rate: 0}, {Years: 1, Rate: 1, Unit: time.Microsecond}, {Years: 1, Rate: 1, Nodes: []NodeNeed{{"x", 0}}}} {
		if _, err := Plan(r); !errors.Is(err, ErrInvalid) {
			t.Errorf("Plan(%+v) = %v, want ErrInvalid", r, err)
		}
	}
}
