package server

import (
	"net/http"
	"net/http/httptest"
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
