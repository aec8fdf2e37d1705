package etcdstore

import (
	"strconv"
	"testing"
)

func FuzzParseReturned(f *testing.F) {
	for _, s := range [][2]string{{"a/0000000000000000001", "5"}, {"a/b/0000000000000000010", "9"}, {"a/0000000000000000001/0000000000000000002", "3"},
		{"/0000000000000000001", "1"}, {"a/000000000000000000x", "1"}, {"a/9223372036854775807", "9223372036854775807"}, {"a/0000000000000000005", "4"}} {
		f.Add(s[0], s[1])
	}
	f.Fuzz(func(t *testing.T, rest, value string) {
		tag, b, ok := parseReturned(rest, value)
		if !ok {
			return
		}
		if b.First < 1 || b.Last < b.First || !b.Returned {
			t.Fatalf("parseReturned(%q, %q) = %+v", rest, value, b)
		}
		if tag+"/"+pad(b.First) != rest {
			t.Fatalf("parseReturned(%q) = %q, %d, which is written %q", rest, tag, b.First, tag+"/"+pad(b.First))
		}
		if v, err := strconv.ParseInt(value, 10, 64); err != nil || v != b.Last {
			t.Fatalf("parseReturned(_, %q) = last %d", value, b.Last)
		}
	})
}
