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
	wantOneLineError(t, cli(t, "", "gen", "--format", "base85"), 2, "--format", "base58", "crockford32")
	wantOneLineError(t, cli(t, "", "decode", "--layout", "twitter", "--format", "base85", "1"), 2, "--format", "base58", "crockford32")
	wantOneLineError(t, cli(t, "", "decode", "--layout", "twitter", "--format", "base58", "4zzv0rZaYpj"), 1,
		`decode "4zzv0rZaYpj"`, `is not base58: '0' at byte 4`)
	wantOneLineError(t, cli(t, "", "decode", "--layout", "twitter", "--format", "hex", "8000000000000000"), 1, "above the int64 range")
}

// TestDecodeNamesForms: without --format, decode reads decimal and does not
// guess; an ID that is not decimal is reported with the forms it is an ID in,
// and --format with one of them decodes it.
func TestDecodeNamesForms(t *testing.T) {
	id := flurry.ID(1541815603606036480)
	for _, c := range []struct {
		in   string
		want []string // forms named, in EncodingNames order
	}{
		{id.Crockford32(), []string{"base36", "crockford32"}}, // 13 characters: above base 62's range
		{"1asd13xh1f800", []string{"base36", "crockford32"}},
		{id.Hex(), []string{"hex"}}, // 16 characters: above the range of the larger bases
		{id.Base62(), []string{"base36", "base58", "base62"}},
		{flurry.ID(175928847299117063).Base62(), []string{"base36", "base62", "crockford32"}},
		{id.Base64(), []string{"base64"}},
	} {
		r := cli(t, "", "decode", "--layout", "twitter", c.in)
		wantOneLineError(t, r, 1, "it is an ID in "+strings.Join(c.want, ", ")+": give --format")
		for _, name := range c.want {
			enc, _ := flurry.ParseEncoding(name)
			want, _ := enc.Parse(c.in)
			d := cli(t, "", "decode", "--layout", "twitter", "--format", name, c.in)
			if d.code != 0 || !strings.Contains(d.stdout, `"id":"`+want.String()+`"`) {
				t.Errorf("decode --format %s %s: %+v; want id %d", name, c.in, d, want)
			}
		}
	}
	// With --format, or for a decimal ID the layout refuses, the error is the form's own.
	r := cli(t, "", "decode", "--layout", "twitter", "--format", "decimal", id.Hex())
	wantOneLineError(t, r, 1, "not a decimal")
	if strings.Contains(r.stderr, "give --format") {
		t.Errorf("decode --format decimal names other forms: %s", r.stderr)
	}
	if r := cli(t, "", "decode", "--layout", "twitter", "@@"); strings.Contains(r.stderr, "give --format") {
		t.Errorf("decode of a string in no form names forms: %s", r.stderr)
	}
}
