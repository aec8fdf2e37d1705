package server

import (
	"net/http"
	"net/http/httptest"
	"strconv"
	"sync/atomic"
	"testing"
)

// discardWriter is a ResponseWriter that keeps nothing, to count the handler's own
// allocations.
type discardWriter struct{ h http.Header }

func (d *discardWriter) Header() http.Header         { return d.h }
func (d *discardWriter) Write(b []byte) (int, error) { return len(b), nil }
func (d *discardWriter) WriteHeader(int)             {}

func httptestRequest(target string) *http.Request { return httptest.NewRequest("GET", target, nil) }

func benchRoute(b *testing.B, target string) {
	s, _ := newServer(b, basicYAML, nil)
	h := s.Handler()
	req := httptest.NewRequest("GET", target, nil)
	w := &discardWriter{h: http.Header{}}
	b.ReportAllocs()
	for b.Loop() {
		clear(w.h)
		h.ServeHTTP(w, req)
	}
}

func BenchmarkNextOne(b *testing.B)       { benchRoute(b, "/v1/default/next") }
func BenchmarkNextOneText(b *testing.B)   { benchRoute(b, "/v1/default/next?format=text") }
func BenchmarkNext1000Text(b *testing.B)  { benchRoute(b, "/v1/default/next?count=1000&format=text") }
func BenchmarkNextSegment(b *testing.B)   { benchRoute(b, "/v1/orders/next") }
func BenchmarkLeafSnowflake(b *testing.B) { benchRoute(b, "/api/snowflake/get/default") }

// bareHandler is bench/cmd/barecounter's handler, the baseline of the
// latency target, for comparing its cost with the one-ID route's.
func bareHandler() http.Handler {
	var n atomic.Int64
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var b [24]byte
		w.Write(strconv.AppendInt(b[:0], n.Add(1), 10))
	})
}

func BenchmarkBareHandler(b *testing.B) {
	h := bareHandler()
	req := httptest.NewRequest("GET", "/v1/default/next?format=text", nil)
	w := &discardWriter{h: http.Header{}}
	b.ReportAllocs()
	for b.Loop() {
		clear(w.h)
		h.ServeHTTP(w, req)
	}
}

// benchListener drives h through a real loopback listener and net/http's server
// and client, one request at a time over one keep-alive connection: what a
// request costs end to end, net/http's own allocations included.
func benchListener(b *testing.B, h http.Handler, target string) {
	ts := httptest.NewServer(h)
	defer ts.Close()
	c := ts.Client()
	req, err := http.NewRequest("GET", ts.URL+target, nil)
	if err != nil {
		b.Fatal(err)
	}
	buf := make([]byte, 512)
	b.ReportAllocs()
	for b.Loop() {
		res, err := c.Do(req)
		if err != nil {
			b.Fatal(err)
		}
		for {
			if _, err := res.Body.Read(buf); err != nil {
				break
			}
		}
		res.Body.Close()
		if res.StatusCode != 200 {
			b.Fatal(res.Status)
		}
	}
}

func BenchmarkListenerNextOneText(b *testing.B) {
	s, _ := newServer(b, basicYAML, nil)
	benchListener(b, s.Handler(), "/v1/default/next?count=1&format=text")
}

func BenchmarkListenerBare(b *testing.B) {
	benchListener(b, bareHandler(), "/v1/default/next?count=1&format=text")
}
