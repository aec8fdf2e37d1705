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
		if shape == 0xff {
			input = s1 // not an array at all
		}
		r, err := parseReply(input, want)
		if err != nil {
			return
		}
		switch r.status {
		case statusIssued:
			if r.first < 0 || r.granted < 1 || r.granted > want {
				t.Fatalf("accepted %v as first %d, granted %d (want %d)", input, r.first, r.granted, want)
			}
		case statusFull, statusBehind, statusBeforeEpoch:
			if r.wait < 0 {
				t.Fatalf("accepted %v with wait %v", input, r.wait)
			}
		case statusExhausted, statusNodeMissing, statusNodeInvalid, statusLayout:
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
