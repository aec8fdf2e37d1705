// Command flurry issues, decodes and plans flurry IDs from the command line.
//
//	flurry layouts                     the preset layouts and their facts
//	flurry gen -n 1e6 --node worker=3  print new IDs, one per line
//	flurry gen --lease file:///dir     ... with a node value leased from a store
//	flurry lease list file:///dir      the node values a lease store holds
//	flurry decode --layout discord ID  take IDs apart as JSON
//	flurry plan --years 20 --rate 1e5  propose a layout for requirements
//	flurry version                     the version of this binary
//
// Errors go to standard error as one line, "flurry: <reason>". The exit code is 0
// on success, 1 on failure, 2 for a usage error (an unknown flag or command, a bad
// flag value) and 130 when interrupted.
package main

import (
	"context"
	"os"
	"os/signal"
	"syscall"
)

func main() {
	quietRedisLogger()
	// Ignoring SIGPIPE turns a write to a closed pipe into an EPIPE error instead of
	// killing the process, so `flurry gen -n 1e9 | head` ends quietly with status 0.
	signal.Ignore(syscall.SIGPIPE)
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	code := run(ctx, os.Args[1:], os.Stdin, os.Stdout, os.Stderr)
	stop()
	os.Exit(code)
}
