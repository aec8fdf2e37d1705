package main

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/flurryid/flurry"
)

// TestGenDecodeFormats: gen --format writes each ID in the encoding, the IDs
// still increase, and decode --format reads them back to the same IDs.
func TestGenDecodeFormats(t *testing.T) {
	for _, name := range flurry.EncodingNames() {
		enc, _ := flurry.ParseEncoding(name)
		r := cli(t, "", "gen", "-n", "200", "--node", "worker=5", "--format", name)
		if r.code != 0 || r.stderr != "" {
			t.Fatalf("gen --format %s: %+v", name, r)
		}
		lines := strings.Split(strings.TrimSuffix(r.stdout, "\n"), "\n")
		if len(lines) != 200 {
			t.Fatalf("gen --format %s: %d lines", name, len(lines))
		}
		var last flurry.ID
		for i, line := range lines {
			id, err := enc.Parse(line)
			if err != nil || id <= last || enc.Format(id) != line {
				t.Fatalf("gen --format %s line %d %q: %d, %v (after %d)", name, i, line, id, err, last)
			}
			last = id
		}
		d := cli(t, r.stdout, "decode", "--layout", "twitter", "--format", name)
		if d.code != 0 || d.stderr != "" {
			t.Fatalf("decode --format %s: %+v", name, d)
		}
		for i, js := range strings.Split(strings.TrimSuffix(d.stdout, "\n"), "\n") {
			var v struct {
				ID     string `json:"id"`
				Worker int    `json:"worker"`
			}
			want, _ := enc.Parse(lines[i])
			if err := json.Unmarshal([]byte(js), &v); err != nil || v.ID != want.String() || v.Worker != 5 {
				t.Fatalf("decode --format %s of %q: %s (%v); want id %d, worker 5", name, lines[i], js, err, want)
			}
		}
	}
}

func TestFormatErrors(t *testing.T) {
	wantOneLineError(t, cli(t, "", "gen", "--format", "base62"), 2, "--format", "base58")
	wantOneLineError(t, cli(t, "", "decode", "--layout", "twitter", "--format", "base62", "1"), 2, "--format", "base58")
	wantOneLineError(t, cli(t, "", "decode", "--layout", "twitter", "--format", "base58", "4zzv0rZaYpj"), 1,
		`decode "4zzv0rZaYpj"`, `is not base58: '0' at byte 4`)
	wantOneLineError(t, cli(t, "", "decode", "--layout", "twitter", "--format", "hex", "8000000000000000"), 1, "above the int64 range")
}
