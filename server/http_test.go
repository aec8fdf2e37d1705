package server

import (
	"io"
	"net/http"
	"net/http/httptest"
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

// TestNextTextSniffed: a text answer of integer IDs carries the Content-Type
// s.ctText over HTTP/1.1 and HTTP/2 although the one-ID path leaves it to
// net/http's sniffing.
func TestNextTextSniffed(t *testing.T) {
	s, _ := newServer(t, basicYAML, nil)
	if got := http.DetectContentType([]byte("1234567890\n")); got != s.ctText[0] {
		t.Fatalf("net/http sniffs digits as %q, the server's text type is %q", got, s.ctText[0])
	}
	ts := httptest.NewUnstartedServer(s.Handler())
	var p http.Protocols
	p.SetHTTP1(true)
	p.SetUnencryptedHTTP2(true)
	ts.Config.Protocols = &p
	ts.Start()
	defer ts.Close()
	for _, c := range []*http.Client{ts.Client(), h2cClient()} {
		for _, target := range []string{"/v1/default/next?format=text", "/v1/default/next?count=40&format=text", "/v1/orders/next?format=text", "/v1/default/next?count=3000&format=text"} {
			res, err := c.Get(ts.URL + target)
			if err != nil {
				t.Fatal(err)
			}
			body, err := io.ReadAll(res.Body)
			res.Body.Close()
			if err != nil || res.StatusCode != 200 || len(body) == 0 {
				t.Fatalf("%s: %v %v %q", target, res.Status, err, body)
			}
			if ct := res.Header["Content-Type"]; len(ct) != 1 || ct[0] != s.ctText[0] {
				t.Errorf("%s over %s: Content-Type %q, want %q", target, res.Proto, ct, s.ctText[0])
			}
		}
	}
}

// TestNextAllocsLikeBare: through a real listener, net/http's server and client
// included, one ID as text allocates no more than the bare handler of the
// latency target (bench/cmd/barecounter) plus ServeMux's one slice for the
// {namespace} wildcard.
func TestNextAllocsLikeBare(t *testing.T) {
	if raceEnabled {
		t.Skip("allocations differ under -race")
	}
	s, _ := newServer(t, basicYAML, nil)
	allocs := func(h http.Handler) float64 {
		ts := httptest.NewServer(h)
		defer ts.Close()
		c := ts.Client()
		req, err := http.NewRequest("GET", ts.URL+"/v1/default/next?count=1&format=text", nil)
		if err != nil {
			t.Fatal(err)
		}
		buf := make([]byte, 512)
		return testing.AllocsPerRun(2000, func() {
			res, err := c.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			for {
				if _, err := res.Body.Read(buf); err != nil {
					break
				}
			}
			res.Body.Close()
		})
	}
	flurry, bare := allocs(s.Handler()), allocs(bareHandler())
	t.Logf("allocations per request, client and server: flurry %.1f, bare %.1f", flurry, bare)
	if flurry > bare+1.5 {
		t.Errorf("one ID allocates %.1f per request, the bare handler %.1f: more than ServeMux's one", flurry, bare)
	}
}
