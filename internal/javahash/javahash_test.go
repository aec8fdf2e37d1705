package javahash

import (
	"bytes"
	"context"
	"fmt"
	"math/rand/v2"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/flurryid/flurry/verify/testenv"
)

func TestStringHash(t *testing.T) {
	for _, tc := range []struct {
		s    string
		want int32
	}{
		{"", 0},
		{"a", 97},
		{"leaf-segment-test", hashOf("leaf-segment-test")},
		{"polygenelubricants", -2147483648}, // a known Integer.MIN_VALUE hash
		{"😀", 31*0xD83D + 0xDE00},
	} {
		if got := StringHash(tc.s); got != tc.want {
			t.Errorf("StringHash(%q) = %d, want %d", tc.s, got, tc.want)
		}
	}
}

// hashOf is the textbook loop over bytes, for ASCII strings.
func hashOf(s string) int32 {
	var h int32
	for i := 0; i < len(s); i++ {
		h = 31*h + int32(s[i])
	}
	return h
}

// randomKeys draws n distinct keys, some sharing prefixes, some outside ASCII and
// the basic plane, so that bins collide and UTF-16 matters.
func randomKeys(r *rand.Rand, n int) []string {
	alpha := []string{"a", "b", "c", "x", "-", "_", "0", "9", "é", "漢", "😀", "Z"}
	seen := map[string]bool{}
	var out []string
	for len(out) < n {
		var b strings.Builder
		if r.IntN(3) == 0 {
			b.WriteString("tag-")
		}
		for l := 1 + r.IntN(8); l > 0; l-- {
			b.WriteString(alpha[r.IntN(len(alpha))])
		}
		if k := b.String(); !seen[k] {
			seen[k] = true
			out = append(out, k)
		}
	}
	return out
}

// TestOrderAgainstJava runs Java's own HashSet, HashMap (and its clone) and
// ConcurrentHashMap on random keys, puts and removals, and compares their
// iteration order with this package's.
func TestOrderAgainstJava(t *testing.T) {
	_, java := testenv.Java(t)
	classes := testenv.CompileJava(t, "", "testdata/Order.java")
	r := rand.New(rand.NewPCG(1, 2))
	var in bytes.Buffer
	var want [][]string
	for c := 0; c < 800; c++ {
		keys := randomKeys(r, 1+r.IntN(120))
		switch c % 4 {
		case 0:
			fmt.Fprintf(&in, "set\t%s\n", strings.Join(keys, "\t"))
			want = append(want, NewHashSetOf(keys).Keys())
		default:
			kind := "map"
			var put, remove func(string)
			var list func() []string
			switch c % 4 {
			case 1:
				m := NewHashMap(0)
				put, remove, list = m.Put, m.Remove, m.Keys
			case 3:
				kind = "clone"
				m := NewHashMap(0)
				put, remove, list = m.Put, m.Remove, func() []string { return m.Clone().Keys() }
			default:
				kind = "chm"
				m := NewConcurrentHashMap()
				put, remove, list = m.Put, m.Remove, m.Keys
			}
			ops := []string{kind}
			for i, k := range keys {
				ops = append(ops, "+"+k)
				put(k)
				if i > 0 && r.IntN(5) == 0 {
					gone := keys[r.IntN(i)]
					ops = append(ops, "-"+gone)
					remove(gone)
				}
				if r.IntN(7) == 0 { // a key put again keeps its place
					again := keys[r.IntN(i+1)]
					ops = append(ops, "+"+again)
					put(again)
				}
			}
			in.WriteString(strings.Join(ops, "\t") + "\n")
			want = append(want, list())
		}
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, java, "-cp", classes, "Order")
	cmd.Stdin = &in
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("java Order: %v", err)
	}
	lines := strings.Split(strings.TrimSuffix(string(out), "\n"), "\n")
	if len(lines) != len(want) {
		t.Fatalf("java printed %d lines for %d cases", len(lines), len(want))
	}
	for i, l := range lines {
		var got []string
		if l != "" {
			got = strings.Split(l, "\t")
		}
		if strings.Join(got, "\t") != strings.Join(want[i], "\t") {
			t.Fatalf("case %d: Java iterates\n  %q\nflurry reproduces\n  %q", i, got, want[i])
		}
	}
}
