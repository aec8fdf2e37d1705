package server

import (
	"strconv"
	"testing"

	"github.com/flurryid/flurry"
)

// TestAppendID checks the in-place increment against strconv across carries
// (9 -> 10, 999 -> 1000) and gaps.
func TestAppendID(t *testing.T) {
	for _, start := range []int64{0, 7, 95, 998, 9_999_990, 1<<62 - 5, 1<<63 - 20} {
		var ids []flurry.ID
		for i := int64(0); i < 15; i++ {
			ids = append(ids, flurry.ID(start+i))
		}
		ids = append(ids, ids[len(ids)-1]+3, ids[len(ids)-1]+4) // a gap, then a successor
		var b, want []byte
		ps, pe := 0, 0
		for i, id := range ids {
			b, ps, pe = appendID(b, id, i > 0 && id == ids[i-1]+1, ps, pe)
			b = append(b, ',')
			want = strconv.AppendInt(want, int64(id), 10)
			want = append(want, ',')
		}
		if string(b) != string(want) {
			t.Errorf("from %d:\n got %s\nwant %s", start, b, want)
		}
	}
}

// TestNextAllocs: the plain next route allocates at most what ServeMux itself
// does for a pattern with a wildcard (one small slice), for one ID and for 1,000.
func TestNextAllocs(t *testing.T) {
	if raceEnabled {
		t.Skip("allocations differ under -race")
	}
	s, _ := newServer(t, basicYAML, nil)
	h := s.Handler()
	for _, target := range []string{"/v1/default/next", "/v1/default/next?count=1000&format=text", "/v1/orders/next?format=number"} {
		req := httptestRequest(target)
		w := &discardWriter{h: map[string][]string{}}
		n := testing.AllocsPerRun(2000, func() {
			clear(w.h)
			h.ServeHTTP(w, req)
		})
		if n > 1 {
			t.Errorf("%s: %v allocations per request, want at most 1", target, n)
		}
	}
}

func TestAppendLines(t *testing.T) {
	for _, start := range []int64{0, 7, 95, 998, 9_999_990, 1<<62 - 5, 1<<63 - 20} {
		var ids []flurry.ID
		for i := int64(0); i < 15; i++ {
			ids = append(ids, flurry.ID(start+i))
		}
		ids = append(ids, ids[len(ids)-1]+3, ids[len(ids)-1]+4, 5) // a gap, a successor, a smaller one
		var want []byte
		for _, id := range ids {
			want = strconv.AppendInt(want, int64(id), 10)
			want = append(want, '\n')
		}
		if got := appendLines([]byte("x"), ids); string(got) != "x"+string(want) {
			t.Errorf("from %d:\n got %q\nwant %q", start, got, want)
		}
	}
}
