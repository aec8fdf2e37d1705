package redisstore

import "testing"

func FuzzParseMember(f *testing.F) {
	for _, s := range []string{member(1, 50), member(1<<63-1, 1<<63-1), member(5, 4), "0000000000000000001:00000000000000000-1", "x"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, m string) {
		first, last, ok := parseMember(m)
		if !ok {
			return
		}
		if first < 1 || last < first {
			t.Fatalf("parseMember(%q) = %d, %d", m, first, last)
		}
		if member(first, last) != m {
			t.Fatalf("parseMember(%q) = %d, %d, which is written %q", m, first, last, member(first, last))
		}
	})
}
