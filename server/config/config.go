// Package config reads and checks the configuration of `flurry serve`: the listen
// address, TLS files, limits, and the namespaces with their strategies and tokens.
//
// A configuration is YAML (see docs/flurry.example.yaml for every key). Load reads
// and checks it whole: unknown keys, wrong types and bad values are all collected
// and returned together as a *Error that names the file, line and key of each, so a
// server with a bad configuration never half-starts.
//
// The zero-configuration server (Default) has one snowflake namespace, "default",
// with a node value leased from a local file, and one segment namespace, "segment",
// whose tag lives in an SQLite file, both under the data directory.
package config

import (
	"reflect"

	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"time"

	"gopkg.in/yaml.v3"

	"github.com/flurryid/flurry/internal/suggest"
	"github.com/flurryid/flurry/layout"
)

// Defaults of the server's settings.
const (
	DefaultListen      = "127.0.0.1:8080"
	DefaultDataDir     = "./flurry-data"
	DefaultMaxCount    = 100_000
	DefaultMaxBody     = 64 << 10
	DefaultShutdown    = 30 * time.Second
	DefaultNamespace   = "default"
	DefaultSegmentName = "segment"
	// DefaultLayout is the layout of snowflake namespaces that name none: Twitter's
	// 41 bits of milliseconds, from 2025, with a 6-bit worker field (64 node values,
	// plenty for one machine's file leases) and a 16-bit sequence, so one node issues
	// up to 65.5 million IDs a second: a server answering batches is not held to
	// Twitter's 4.1 million.
	DefaultLayout = "time:41:1ms:2025-01-01T00:00:00Z,worker:6,seq:16"
	// DefaultSegmentStep is the step a missing tag is created with when the
	// namespace's create key (or the embedded default) asks for it.
	DefaultSegmentStep = 1000
)

// Strategies returns the names of the strategies a namespace may have.
func Strategies() []string { return []string{"snowflake", "segment", "redis", "uuidv7", "objectid"} }

// Config is the whole configuration of a server.
type Config struct {
	// Listen is the TCP address to listen on. Empty means DefaultListen.
	Listen string `yaml:"listen"`
	// DataDir holds the embedded stores: the file leases and the segment file store.
	// Empty means DefaultDataDir.
	DataDir string `yaml:"data_dir"`
	// MaxCount is the largest count one request may ask for. Zero means
	// DefaultMaxCount.
	MaxCount int `yaml:"max_count"`
	// MaxBodyBytes limits request bodies (gRPC and JSON calls). Zero means
	// DefaultMaxBody.
	MaxBodyBytes int64 `yaml:"max_body_bytes"`
	// ShutdownTimeout bounds a graceful shutdown (a Go duration). Empty means
	// DefaultShutdown.
	ShutdownTimeout Duration `yaml:"shutdown_timeout"`
	// TLS serves HTTPS (and gRPC over TLS) when both files are given.
	TLS TLS `yaml:"tls"`
	// Access holds the operators' (admin) tokens and what anonymous callers may
	// see (docs/security.md).
	Access Access `yaml:"access"`
	// Limits bound what one client can make the server hold: IDs in flight,
	// request read and response write time, HTTP/2 streams, requests per token.
	Limits Limits `yaml:"limits"`
	// CORS lets pages on other origins call the API from a browser. Empty
	// means none may: a browser then allows only pages of the server's own
	// origin.
	CORS CORS `yaml:"cors"`
	// Namespaces maps a namespace's name to its settings.
	Namespaces map[string]*Namespace `yaml:"namespaces"`
	// Leaf serves every tag of Leaf's leaf_alloc on Leaf's routes (compat.go).
	Leaf *LeafCompat `yaml:"leaf"`
	// TinyID serves tinyid's routes on tinyid's tables (compat.go).
	TinyID *TinyIDCompat `yaml:"tinyid"`
	// Region makes the server one of a region's servers (region.go,
	// docs/multi-region.md). Nil means a server of no region.
	Region *Region `yaml:"region"`

	// Order lists the namespaces in the order of the file (the map has none).
	Order []string `yaml:"-"`
	// File is the file the configuration came from; empty for Default.
	File string `yaml:"-"`

	root *yaml.Node
}

// CORS lists the origins whose pages may call the API from a browser
// (cross-origin resource sharing). Tokens are still required: a browser sends
// them in the Authorization header, never as cookies, so the server never
// allows credentials and an origin is answered only by its exact name.
type CORS struct {
	// Origins are the allowed origins, each scheme://host[:port] as a browser
	// sends it in the Origin header: "https://app.example.com",
	// "http://localhost:5173". "*" is refused: list each origin.
	Origins []string `yaml:"origins"`
	// MaxAge is how long a browser may cache a preflight's answer (a Go
	// duration). Empty means DefaultCORSMaxAge.
	MaxAge Duration `yaml:"max_age"`
}

// DefaultCORSMaxAge is how long a browser caches a preflight when cors.max_age
// is not set.
const DefaultCORSMaxAge = 10 * time.Minute

// TLS names the certificate and key files, PEM-encoded.
type TLS struct {
	Cert string `yaml:"cert"`
	Key  string `yaml:"key"`
	// ClientCA, when set, makes TLS mutual: every client must present a
	// certificate signed by a CA in this PEM file (service-to-service
	// deployments). Tokens are still checked on top.
	ClientCA string `yaml:"client_ca"`
}

// Namespace is one namespace: a strategy, its settings and its tokens.
type Namespace struct {
	// Strategy is one of snowflake, segment, redis, uuidv7, objectid. redis
	// needs a program that imports server/redisstrategy (the flurry command does
	// with -tags flurry_redis or flurry_full).
	Strategy string `yaml:"strategy"`
	// Tokens are accepted bearer tokens, written in the file (prefer TokenEnv).
	Tokens []string `yaml:"tokens"`
	// TokenEnv names environment variables that each hold an accepted token.
	TokenEnv []string `yaml:"token_env"`
	// MaxCount is the largest count one request to this namespace may ask for.
	// Zero means the server's max_count.
	MaxCount int `yaml:"max_count"`

	Snowflake *Snowflake `yaml:"snowflake"`
	Segment   *Segment   `yaml:"segment"`
	Redis     *Redis     `yaml:"redis"`
	UUIDv7    *struct{}  `yaml:"uuidv7"`
	ObjectID  *struct{}  `yaml:"objectid"`

	// Resolved is filled by Load: the tokens from Tokens and TokenEnv.
	Resolved []string `yaml:"-"`
}

// DefaultMaxDrift is a snowflake namespace's max_drift when it is not set: how far
// ahead of its clock a node may issue to continue above earlier IDs (behind:
// logical) or through a burst (overflow: borrow).
const DefaultMaxDrift = time.Minute

// Snowflake configures a snowflake namespace: a layout, the generator's policies
// and the lease its node value comes from.
type Snowflake struct {
	// Layout is a preset name or a layout's text form. Empty means DefaultLayout.
	Layout string `yaml:"layout"`
	// Node gives node fields that are not leased, "datacenter=1".
	Node string `yaml:"node"`
	// Overflow is wait (default) or borrow. Behind is logical (default) or fail:
	// what a node does when its clock is behind the IDs it must continue above (a
	// restart after a crash or on a clock that stepped back): issue above them at
	// once, ahead of its clock by at most MaxDrift, or refuse until its clock has
	// passed them (snowflake.BehindPolicy).
	Overflow string `yaml:"overflow"`
	Behind   string `yaml:"behind"`
	// MaxDrift bounds borrow and logical: how far ahead of the clock IDs may run
	// (a Go duration; empty means DefaultMaxDrift). A clock further behind than
	// that is refused, as with behind: fail.
	MaxDrift Duration `yaml:"max_drift"`
	// WaitThreshold is the clock step back slept off (empty means 10ms).
	WaitThreshold Duration `yaml:"wait_threshold"`
	// Start is zero, random or continue; RandomBelow bounds random. Empty means
	// zero, except in a Leaf namespace (LeafStyle), where it means random, as
	// Leaf's generator starts each millisecond below 100: see StartPolicy.
	Start       string `yaml:"start"`
	RandomBelow int    `yaml:"random_below"`
	// Lease says where the node value comes from.
	Lease Lease `yaml:"lease"`
}

// LeafStyle reports whether the namespace stands in for Meituan Leaf's snowflake
// servers: its layout is the leaf preset, or its node value comes from Leaf's
// ZooKeeper registry (a leafzk:// lease store). Such a namespace issues as Leaf
// does unless told otherwise (StartPolicy).
func (s *Snowflake) LeafStyle() bool {
	if s == nil {
		return false
	}
	scheme, _, _ := strings.Cut(s.Lease.Store, "://")
	return strings.EqualFold(strings.TrimSpace(s.Layout), "leaf") || strings.EqualFold(scheme, "leafzk")
}

// IsLeafLayout reports whether l has the bits of Meituan Leaf's IDs, those of the
// leaf preset: 41 bits of milliseconds from Twitter's epoch, one 10-bit node
// field, a 12-bit sequence. Field names do not count.
func IsLeafLayout(l *layout.Layout) bool {
	leaf, _ := layout.Lookup("leaf")
	a, b := l.Fields(), leaf.Fields()
	if l.Unit() != leaf.Unit() || !l.Epoch().Equal(leaf.Epoch()) || len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i].Kind != b[i].Kind || a[i].Bits != b[i].Bits {
			return false
		}
	}
	return true
}

// StartPolicy is the sequence start the namespace uses: Start when given; else
// random in a Leaf namespace (LeafStyle), where Leaf starts each millisecond's
// sequence at a random value below 100, so that IDs issued a few per millisecond
// still spread over id % N shards (with zero they would all be multiples of
// 4096); else zero.
func (s *Snowflake) StartPolicy() string {
	switch {
	case s == nil:
		return ""
	case s.Start != "":
		return s.Start
	case s.LeafStyle():
		return "random"
	}
	return ""
}

// Lease configures the lease of a snowflake namespace's node value.
type Lease struct {
	// Store is a lease store URL. Empty means file://<data_dir>/leases.
	Store string `yaml:"store"`
	// Scope names the pool. Empty means the namespace's name.
	Scope string `yaml:"scope"`
	// Fields are the leased node fields. Empty means every field not in Node.
	Fields []string `yaml:"fields"`
	// Fixed leases exactly this value (a value from configuration).
	Fixed *int64 `yaml:"fixed"`
	// Budget is the outage budget: how long the namespace goes on issuing when
	// its lease store does not answer (lease.Options.Budget; from 100ms to 12h).
	// Empty means 1m, or, when ttl is set, the most that ttl allows.
	Budget Duration `yaml:"budget"`
	// TTL is how long a crashed node's value stays held (from 1s to 24h); it must
	// cover the budget, one window and a tenth of itself. Empty means the
	// shortest that does (69s with the defaults). Window is the renewal interval,
	// one store write per window per node (from 100ms to 1h); empty means 2s.
	TTL    Duration `yaml:"ttl"`
	Window Duration `yaml:"window"`
	// Order is scope (default) or value: which earlier IDs a new holder starts
	// above (lease.Order; docs/leases.md).
	Order string `yaml:"order"`
}

// Segment configures a segment namespace: one tag, served from one or more stores.
type Segment struct {
	// Stores are segment store URLs; several make residue classes. Empty means
	// file://<data_dir>/segments (segment/filestore), or the SQLite file
	// <data_dir>/segments.db of an earlier flurry while that directory has no state.
	Stores []string `yaml:"stores"`
	// Tag is the tag served. Empty means the namespace's name.
	Tag string `yaml:"tag"`
	// Residues and Modulus place the stores in residue classes of a larger ID
	// space shared with other regions (segment.Options.Residues, Modulus;
	// docs/multi-region.md): store i yields the IDs = residues[i] (mod modulus).
	// Empty means residues 0..len(stores)-1 of len(stores).
	Residues []int64 `yaml:"residues"`
	Modulus  int64   `yaml:"modulus"`
	// Create makes the tag in every store where it is missing, with this step.
	Create *CreateTag `yaml:"create"`
	// Runway, Target and FetchTimeout are Go durations (segment.Options).
	Runway       Duration `yaml:"runway"`
	Target       Duration `yaml:"target"`
	FetchTimeout Duration `yaml:"fetch_timeout"`
	MaxStep      int64    `yaml:"max_step"`
	Prefetch     float64  `yaml:"prefetch"`
}

// CreateTag is how a missing tag is created.
type CreateTag struct {
	// Step is the tag's configured step. Zero means DefaultSegmentStep.
	Step int64 `yaml:"step"`
	// Start is the counter the tag starts at: its first ID is Start+1.
	Start int64 `yaml:"start"`
}

// Redis configures a Redis-native namespace (package redisgen).
type Redis struct {
	// URL is the Redis server, redis://host:6379/0. Required.
	URL string `yaml:"url"`
	// Layout as for snowflake. Empty means DefaultLayout.
	Layout string `yaml:"layout"`
	// Key is the redisgen namespace (its keys are {key}:node and {key}:last). Empty
	// means the namespace's name.
	Key string `yaml:"key"`
	// Node, when set, is written to Redis's node key at start ("worker=3").
	Node string `yaml:"node"`
	// BehindWait is how long a call waits for Redis's clock (empty means 10ms).
	BehindWait Duration `yaml:"behind_wait"`
	// PlainWindow is redisgen.Options.PlainWindow: how long after a script call
	// one-ID requests are served by a plain HINCRBY (docs/redisgen.md, "The plain
	// path"). Empty means redisgen's default (10ms, or the layout's unit if
	// longer), which is also the longest accepted: the plain path assumes that a
	// failover to a lagging replica takes longer than the window. A negative
	// duration (-1ms) turns the plain path off, so every ID runs the script.
	PlainWindow Duration `yaml:"plain_window"`
	// Checks is what the namespace does at start (and `flurry serve --check`)
	// when the Redis primary's settings that uniqueness relies on are not as
	// docs/redisgen.md asks (min-replicas-to-write, two replicas, appendonly)
	// or cannot be read (CONFIG renamed or forbidden): "warn" (empty) logs
	// each, naming the setting and the duplicate it prevents; "refuse" makes
	// the namespace fail to start instead; "off" does not look.
	Checks string `yaml:"checks"`
}

// RedisChecks returns the values of Redis.Checks, the default first.
func RedisChecks() []string { return []string{"warn", "refuse", "off"} }

// Problem is one thing wrong in a configuration.
type Problem struct {
	File string // the file, or empty
	Line int    // 1-based; 0 when unknown
	Key  string // dotted path, e.g. namespaces.orders.snowflake.layout
	What string // what is wrong and what to do
	// Meant is, for an unknown key, the known key it most likely misspells
	// ("layout" for "layuot"); empty otherwise.
	Meant string
}

// String writes the problem as "file:line: key: what".
func (p Problem) String() string {
	var b strings.Builder
	if p.File != "" {
		b.WriteString(p.File)
		if p.Line > 0 {
			fmt.Fprintf(&b, ":%d", p.Line)
		}
		b.WriteString(": ")
	} else if p.Line > 0 {
		fmt.Fprintf(&b, "line %d: ", p.Line)
	}
	if p.Key != "" {
		b.WriteString(p.Key + ": ")
	}
	b.WriteString(p.What)
	return b.String()
}

// Error lists every problem of a configuration. It matches ErrInvalid.
type Error struct{ Problems []Problem }

// ErrInvalid is matched (errors.Is) by the *Error of Load, Parse and Check.
var ErrInvalid = errors.New("config: invalid configuration")

// Error lists the problems, one per line.
func (e *Error) Error() string {
	lines := make([]string, len(e.Problems))
	for i, p := range e.Problems {
		lines[i] = p.String()
	}
	n := len(lines)
	s := "problem"
	if n != 1 {
		s = "problems"
	}
	return fmt.Sprintf("configuration has %d %s:\n  %s", n, s, strings.Join(lines, "\n  "))
}

// Is reports whether target is ErrInvalid.
func (e *Error) Is(target error) bool { return target == ErrInvalid }

// Default returns the configuration of a server started without one: a "default"
// snowflake namespace with a file lease and a "segment" namespace whose tag is
// created in a file store (segment/filestore) if missing, both under DataDir.
func Default() *Config {
	c := &Config{
		Namespaces: map[string]*Namespace{
			DefaultNamespace:   {Strategy: "snowflake", Snowflake: &Snowflake{}},
			DefaultSegmentName: {Strategy: "segment", Segment: &Segment{Create: &CreateTag{Step: DefaultSegmentStep}}},
		},
		Order: []string{DefaultNamespace, DefaultSegmentName},
	}
	return c
}

// Load reads and checks the configuration file at path, with token_env variables
// from the process environment.
func Load(path string) (*Config, error) {
	return LoadEnv(path, os.LookupEnv)
}

// LoadEnv reads and checks the configuration file at path; env looks up token_env
// variables, as in Parse.
func LoadEnv(path string, env func(string) (string, bool)) (*Config, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("config: %w; pass --config with a readable YAML file (see docs/flurry.example.yaml)", err)
	}
	return Parse(path, b, env)
}

// Parse reads and checks a configuration from its YAML text. file names it in
// problems; env looks up token_env variables (os.LookupEnv).
func Parse(file string, data []byte, env func(string) (string, bool)) (*Config, error) {
	c := &Config{File: file}
	var probs []Problem
	var root yaml.Node
	if err := yaml.Unmarshal(data, &root); err != nil {
		return nil, &Error{Problems: []Problem{{File: file, What: yamlMsg(err)}}}
	}
	if len(root.Content) == 0 {
		return nil, &Error{Problems: []Problem{{File: file, What: "the file is empty; give at least one namespace under namespaces:"}}}
	}
	dec := yaml.NewDecoder(bytes.NewReader(data))
	dec.KnownFields(true)
	if err := dec.Decode(c); err != nil && !errors.Is(err, io.EOF) {
		var te *yaml.TypeError
		if errors.As(err, &te) {
			for _, m := range te.Errors {
				probs = append(probs, lineProblem(file, root.Content[0], m))
			}
		} else {
			return nil, &Error{Problems: []Problem{{File: file, What: yamlMsg(err)}}}
		}
	}
	c.root = root.Content[0]
	if ns := mapValue(c.root, "namespaces"); ns != nil && ns.Kind == yaml.MappingNode {
		for i := 0; i+1 < len(ns.Content); i += 2 {
			c.Order = append(c.Order, ns.Content[i].Value)
		}
	}
	probs = append(probs, c.check(env)...)
	probs = afterSlips(probs)
	if len(probs) > 0 {
		sort.SliceStable(probs, func(i, j int) bool { return probs[i].Line < probs[j].Line })
		return nil, &Error{Problems: probs}
	}
	return c, nil
}

// afterSlips drops the problems a misspelt key causes: its mapping was read
// without the key meant (strategy: missing; a node field the default layout
// lacks), so what else is said of that mapping would only confuse. The slip is
// reported with its "did you mean"; the rest comes back once it is fixed.
func afterSlips(probs []Problem) []Problem {
	var parents []string
	for _, p := range probs {
		if p.Meant != "" {
			parent := ""
			if i := strings.LastIndexByte(p.Key, '.'); i >= 0 {
				parent = p.Key[:i]
			}
			parents = append(parents, parent)
		}
	}
	if len(parents) == 0 {
		return probs
	}
	out := probs[:0]
	for _, p := range probs {
		under := false
		for _, parent := range parents {
			if parent == "" || p.Key == parent || strings.HasPrefix(p.Key, parent+".") {
				under = true
			}
		}
		if !under || p.Meant != "" || strings.HasPrefix(p.What, "unknown key") {
			out = append(out, p)
		}
	}
	return out
}

// Check validates a configuration built in code (such as Default after changes)
// and resolves its tokens.
func (c *Config) Check(env func(string) (string, bool)) error {
	if probs := c.check(env); len(probs) > 0 {
		return &Error{Problems: probs}
	}
	return nil
}

// lineProblem turns one of yaml.v3's type errors, such as "line 3: field x not
// found in type config.Lease" or "line 2: cannot unmarshal !!str `abc` into int",
// into a Problem keyed by the YAML path at that line, in words with no Go type names.
func lineProblem(file string, root *yaml.Node, m string) Problem {
	p := Problem{File: file, What: m}
	var line int
	if n, _ := fmt.Sscanf(m, "line %d:", &line); n == 1 {
		p.Line = line
		p.What = strings.TrimSpace(m[strings.Index(m, ":")+1:])
	}
	if f, ok := strings.CutPrefix(p.What, "field "); ok {
		if name, typ, ok := strings.Cut(f, " not found in type "); ok {
			p.Key = strings.Join(pathAt(root, line, name, "", "", nil), ".")
			if near, ok := suggest.Closest(name, yamlKeys(reflect.TypeOf(Config{}), typ)); ok {
				p.What, p.Meant = fmt.Sprintf("unknown key; did you mean %s?", near), near
				if p.Key == "" {
					p.What = fmt.Sprintf("unknown key %q; did you mean %s?", name, near)
				}
				return p
			}
			p.What = "unknown key; check its spelling against docs/flurry.example.yaml"
			if p.Key == "" {
				p.What = fmt.Sprintf("unknown key %q; check its spelling against docs/flurry.example.yaml", name)
			}
			return p
		}
	}
	if rest, ok := strings.CutPrefix(p.What, "cannot unmarshal "); ok {
		// "!!str `abc` into int": the YAML tag, the value, then the Go type.
		val, typ := rest, ""
		if i := strings.LastIndex(rest, " into "); i >= 0 {
			val, typ = rest[:i], rest[i+len(" into "):]
		}
		tag, val, _ := strings.Cut(val, " ")
		val = strings.Trim(val, "`")
		p.Key = strings.Join(pathAt(root, line, "", tag, val, nil), ".")
		shown := val
		if shown == "" {
			shown = map[string]string{"!!seq": "a list", "!!map": "a mapping", "!!str": "text", "!!int": "a number", "!!bool": "true or false", "!!float": "a number"}[tag]
		}
		p.What = fmt.Sprintf("%s is not %s", shown, yamlKind(typ))
	}
	return p
}

// yamlKeys returns the YAML keys of the struct type named typ ("config.Snowflake",
// as yaml.v3 names it) among t and the types its fields hold, for "did you mean".
func yamlKeys(t reflect.Type, typ string) []string {
	seen := map[reflect.Type]bool{}
	var find func(t reflect.Type) []string
	find = func(t reflect.Type) []string {
		for t.Kind() == reflect.Pointer || t.Kind() == reflect.Slice || t.Kind() == reflect.Map {
			t = t.Elem()
		}
		if t.Kind() != reflect.Struct || seen[t] {
			return nil
		}
		seen[t] = true
		var keys []string
		for i := 0; i < t.NumField(); i++ {
			if name, _, _ := strings.Cut(t.Field(i).Tag.Get("yaml"), ","); name != "" && name != "-" {
				keys = append(keys, name)
			}
		}
		if t.String() == typ {
			return keys
		}
		for i := 0; i < t.NumField(); i++ {
			if k := find(t.Field(i).Type); k != nil {
				return k
			}
		}
		return nil
	}
	return find(t)
}

// yamlKind names what a Go type is in YAML words.
func yamlKind(typ string) string {
	switch {
	case strings.HasPrefix(typ, "int"), strings.HasPrefix(typ, "uint"):
		return "a whole number"
	case strings.HasPrefix(typ, "float"):
		return "a number"
	case typ == "bool":
		return "true or false"
	case typ == "string":
		return "text (quote it)"
	case strings.HasPrefix(typ, "[]"):
		return "a list, e.g. [a, b]"
	default:
		return "a mapping of keys, e.g. {key: value}"
	}
}

// pathAt returns the keys (and list indices) leading to the node at line: the
// mapping key named name there or, with name empty, the value with YAML tag tag
// whose text starts like val (yaml.v3 shortens long values to "abc...").
func pathAt(n *yaml.Node, line int, name, tag, val string, path []string) []string {
	match := func(v *yaml.Node) bool {
		if v.Line != line || v.Tag != tag {
			return false
		}
		return val == "" || v.Value == val || strings.HasSuffix(val, "...") && strings.HasPrefix(v.Value, strings.TrimSuffix(val, "..."))
	}
	switch n.Kind {
	case yaml.MappingNode:
		for i := 0; i+1 < len(n.Content); i += 2 {
			k, v := n.Content[i], n.Content[i+1]
			here := append(path[:len(path):len(path)], k.Value)
			if name != "" && k.Line == line && k.Value == name || name == "" && match(v) {
				return here
			}
			if p := pathAt(v, line, name, tag, val, here); p != nil {
				return p
			}
		}
	case yaml.SequenceNode:
		for i, v := range n.Content {
			here := append(path[:len(path):len(path)], strconv.Itoa(i))
			if name == "" && match(v) {
				return here
			}
			if p := pathAt(v, line, name, tag, val, here); p != nil {
				return p
			}
		}
	}
	return nil
}

func yamlMsg(err error) string {
	return strings.TrimPrefix(err.Error(), "yaml: ") + " (not valid YAML)"
}

// mapValue returns the value node of key in mapping n, or nil.
func mapValue(n *yaml.Node, key string) *yaml.Node {
	if n == nil || n.Kind != yaml.MappingNode {
		return nil
	}
	for i := 0; i+1 < len(n.Content); i += 2 {
		if n.Content[i].Value == key {
			return n.Content[i+1]
		}
	}
	return nil
}

// line returns the line of the deepest node of path that exists (keys are
// mapping keys, or list indices in decimal; the key's own line is reported for the
// last one, the item's own line for a list item).
func (c *Config) line(path ...string) int {
	n, line := c.root, 0
	for _, k := range path {
		if n != nil && n.Kind == yaml.SequenceNode {
			// A list item: its own line, so a bad item is found without counting.
			i, err := strconv.Atoi(k)
			if err != nil || i < 0 || i >= len(n.Content) {
				break
			}
			n = n.Content[i]
			line = n.Line
			continue
		}
		if n == nil || n.Kind != yaml.MappingNode {
			break
		}
		found := false
		for i := 0; i+1 < len(n.Content); i += 2 {
			if n.Content[i].Value == k {
				line = n.Content[i].Line
				n = n.Content[i+1]
				found = true
				break
			}
		}
		if !found {
			break
		}
	}
	return line
}

// ResolveData returns the data directory with its default applied, made absolute.
func (c *Config) ResolveData() string {
	d := c.DataDir
	if d == "" {
		d = DefaultDataDir
	}
	if a, err := filepath.Abs(d); err == nil {
		return a
	}
	return d
}
