// Command barecounter is the baseline of the server's throughput target: a bare
// net/http handler that returns an atomic counter, as plain text, on every path.
// Run it beside `flurry serve` and drive both with the same wrk command
// (docs/server.md).
package main

import (
	"flag"
	"log"
	"net/http"
	"strconv"
	"sync/atomic"
)

func main() {
	addr := flag.String("listen", "127.0.0.1:8081", "address to listen on")
	flag.Parse()
	var n atomic.Int64
	log.Fatal(http.ListenAndServe(*addr, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var b [24]byte
		w.Write(strconv.AppendInt(b[:0], n.Add(1), 10))
	})))
}
