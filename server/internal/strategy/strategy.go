// Package strategy is what the server shares with the namespace strategies that
// live outside it: the redis strategy (package server/redisstrategy) links
// go-redis, which a server without it must not, so it registers itself here when
// a program imports it, as database/sql drivers do, and the server builds the
// namespaces that name it through the registry (package internal/engines).
package strategy

import (
	"context"
	"log/slog"
	"time"

	"github.com/flurryid/flurry"
	"github.com/flurryid/flurry/internal/engines"
	"github.com/flurryid/flurry/layout"
	"github.com/flurryid/flurry/server/config"
)

// Source is what a namespace of a registered strategy issues from: integer IDs
// of a layout, carrying a node value the source can read back.
type Source interface {
	flurry.Source
	// Layout returns the layout of the IDs.
	Layout() *layout.Layout
	// Node returns the node value the IDs carry. An error means that the source
	// cannot issue now: the namespace reports itself not ready, and the error goes
	// to the log.
	Node(ctx context.Context) (layout.NodeValues, error)
	// Close stops the source and frees what it holds.
	Close() error
}

// Namespace is what a strategy makes a Source from.
type Namespace struct {
	Name   string            // the namespace's name
	Config *config.Namespace // its configuration, which Check accepted
	Logger *slog.Logger      // the server's logger
}

// Class is what the server's answer to a refused request needs to know of an
// error of a Source: every refusal is a 503, with a message and a Retry-After
// that depend on these.
type Class struct {
	Exhausted bool          // the layout's time has run out: no ID will come
	Behind    bool          // the clock stands behind the last ID issued
	Gap       time.Duration // with Behind: how long until it catches up, if known
	Closed    bool          // the source is closed (the server is shutting down)
}

// A Strategy makes the sources of the namespaces whose strategy: key names it.
type Strategy struct {
	// Open makes the source of one namespace.
	Open func(ctx context.Context, ns Namespace) (Source, error)
	// Classify tells the server what an error of one of its sources means.
	Classify func(error) Class
	// Probe, when set, looks at what a namespace's source would rely on
	// without starting it, for `flurry serve --check`: it returns lines to
	// print, and an error when the namespace would refuse to start.
	Probe func(ctx context.Context, ns Namespace) ([]string, error)
}

// Register makes s the strategy of the namespaces whose strategy: key is name,
// from the init function of the package that holds it. It panics if name is
// registered twice or s lacks Open or Classify.
func Register(name string, s Strategy) {
	if s.Open == nil || s.Classify == nil {
		panic("strategy: Register of " + name + " without Open and Classify")
	}
	engines.Register(engines.Strategy, name, s)
}

// Lookup returns the strategy registered as name.
func Lookup(name string) (Strategy, bool) {
	return engines.Lookup[Strategy](engines.Strategy, name)
}
