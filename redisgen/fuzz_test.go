package redisgen

import (
	"net/url"
	"strings"
	"testing"
)

// FuzzParseReply feeds parseReply replies of every shape the script and a broken
// server could give: it must never panic, and what it accepts must be in range.
func FuzzParseReply(f *testing.F) {
	f.Add(int64(0), int64(5), int64(7), int64(3), "", "", uint8(4), int64(10))
	f.Add(int64(1), int64(250), int64(0), int64(0), "", "", uint8(2), int64(1))
	f.Add(int64(2), int64(1000), int64(99), int64(98), "", "", uint8(4), int64(1))
	f.Add(int64(4), int64(0), int64(0), int64(0), "worker", "", uint8(2), int64(1))
	f.Add(int64(5), int64(0), int64(0), int64(0), "worker", "32", uint8(3), int64(1))
	f.Add(int64(0), int64(1)<<31, int64(-1), int64(0), "x", "y", uint8(4), int64(0))
	f.Add(int64(0), int64(7)<<41+5, int64(0), int64(0), "", "", uint8(0xfe), int64(1))
	f.Add(int64(0), int64(-1), int64(0), int64(0), "", "", uint8(0xfe), int64(1))
	f.Add(int64(6), int64(0), int64(0), int64(0), "twitter", "", uint8(1), int64(1))
	params, err := paramsOf(mustLayout(f, "twitter"))
	if err != nil {
		f.Fatal(err)
	}
	wide, err := paramsOf(mustLayout(f, "time:41:1ms:2020-01-01T00:00:00Z,worker:6,seq:16"))
	if err != nil {
		f.Fatal(err)
	}
	f.Fuzz(func(t *testing.T, status, a, b, c int64, s1, s2 string, shape uint8, want int64) {
		// shape picks the element count (low 3 bits) and which elements are
		// strings (the next bits).
		vals := []any{a, b, c, s1, s2}
		n := int(shape & 7)
		reply := []any{status}
		for i := range min(n, len(vals)) {
			v := vals[i]
			if shape&(8<<i) != 0 && i < 3 {
				v = s1
			} else if i >= 3 && shape&0x80 != 0 {
				v = a
			}
			reply = append(reply, v)
		}
		var input any = reply
		switch shape {
		case 0xff:
			input = s1 // not an array at all
		case 0xfe:
			input = a // Next's integer reply
		}
		p := &params
		if status&1 != 0 {
			p = &wide
		}
		r, err := parseReply(input, p, want)
		if err != nil {
			return
		}
		switch r.status {
		case statusIssued:
			if r.tick < 0 || r.tick > p.maxTick || r.seq < 0 || r.granted < 1 || r.granted > want || r.seq+r.granted-1 > p.seqMax {
				t.Fatalf("accepted %v as tick %d, seq %d, granted %d (want %d)", input, r.tick, r.seq, r.granted, want)
			}
		case statusFull, statusBehind, statusBeforeEpoch:
			if r.wait < 0 {
				t.Fatalf("accepted %v with wait %v", input, r.wait)
			}
		case statusExhausted, statusLayout, statusNodeChanged:
		default:
			t.Fatalf("accepted unknown status in %v", input)
		}
	})
}

// FuzzParseURL: a URL is accepted or refused, never with a panic, and a refusal
// never shows the password.
func FuzzParseURL(f *testing.F) {
	for _, s := range []string{
		"redis://127.0.0.1:6379/0",
		"rediss://u:sekrit@h:1/2?dial_timeout=1s",
		"redis://u:sekrit@h:1/x",
		"redis://:sekrit@h:1/0?bogus=sekrit",
		"http://u:sekrit@h",
		"redis://u:sek%zzrit@h",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, raw string) {
		_, err := parseURL(raw)
		if err == nil {
			return
		}
		u, perr := url.Parse(raw)
		if perr != nil || u.User == nil {
			return
		}
		if pw, ok := u.User.Password(); ok && len(pw) >= 4 && strings.Contains(err.Error(), pw) && !strings.Contains(u.Redacted(), pw) {
			t.Fatalf("error %q shows the password of %q", err, raw)
		}
	})
}
