package config

import (
	"encoding"
	"fmt"
	"net"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/flurryid/flurry/internal/engines"
	"github.com/flurryid/flurry/internal/storeurl"
	"github.com/flurryid/flurry/layout"
	"github.com/flurryid/flurry/lease"
	"github.com/flurryid/flurry/lease/leasestore"
	"github.com/flurryid/flurry/segment"
	"github.com/flurryid/flurry/segment/segmentstore"
	"github.com/flurryid/flurry/snowflake"
)

// Store URL schemes flurry can open, for early checks; the store packages check
// the rest of each URL when the server starts. A scheme of an engine whose package
// this program does not import is reported with what to do (store).
func leaseSchemes() []string { return schemesOf(engines.LeaseStore) }

func segmentSchemes() []string { return schemesOf(engines.SegmentStore) }

// schemesOf lists file and the schemes of every engine family with a store of kind
// k (ZooKeeper keeps leases only).
func schemesOf(k engines.Kind) []string {
	out := []string{"file"}
	for _, f := range engines.Families() {
		if f.Package(k) != "" {
			out = append(out, f.Schemes...)
		}
	}
	return out
}

// checker collects problems with the file and line of each key.
type checker struct {
	c     *Config
	probs []Problem
}

func (k *checker) add(path []string, format string, a ...any) {
	k.probs = append(k.probs, Problem{File: k.c.File, Line: k.c.line(path...), Key: strings.Join(path, "."), What: fmt.Sprintf(format, a...)})
}

func (c *Config) check(env func(string) (string, bool)) []Problem {
	k := &checker{c: c}
	if env == nil {
		env = func(string) (string, bool) { return "", false }
	}
	if c.Listen != "" {
		if err := CheckListen(c.Listen); err != nil {
			k.add([]string{"listen"}, "%v", err)
		}
	}
	k.maxCount([]string{"max_count"}, c.MaxCount)
	k.limits(env)
	if c.MaxBodyBytes < 0 {
		k.add([]string{"max_body_bytes"}, "%d is negative", c.MaxBodyBytes)
	}
	k.duration([]string{"shutdown_timeout"}, c.ShutdownTimeout, false)
	if (c.TLS.Cert == "") != (c.TLS.Key == "") {
		k.add([]string{"tls"}, "give both cert and key, or neither")
	}
	k.compat(c)
	k.cors(c.CORS)
	k.region(c)
	if len(c.Namespaces) == 0 && c.Leaf == nil && c.TinyID == nil {
		k.add([]string{"namespaces"}, "no namespace: give at least one, e.g. namespaces: {default: {strategy: snowflake}}")
	}
	for _, name := range c.order() {
		ns := c.Namespaces[name]
		p := []string{"namespaces", name}
		if !validName(name) {
			k.add(p, "namespace name %q: use 1 to 64 ASCII letters, digits, '_', '-' or '.' (it is a URL path segment)", name)
		}
		if ns == nil {
			k.add(p, "empty namespace: give strategy: one of %s", strings.Join(Strategies(), ", "))
			continue
		}
		k.namespace(p, name, ns, env)
	}
	return k.probs
}

// order returns the namespace names in file order, then any others sorted.
func (c *Config) order() []string {
	seen := map[string]bool{}
	var out []string
	for _, n := range c.Order {
		if _, ok := c.Namespaces[n]; ok && !seen[n] {
			seen[n] = true
			out = append(out, n)
		}
	}
	var rest []string
	for n := range c.Namespaces {
		if !seen[n] {
			rest = append(rest, n)
		}
	}
	sortStrings(rest)
	c.Order = append(out, rest...)
	return c.Order
}

func validName(s string) bool {
	if s == "" || len(s) > 64 || s == "." || s == ".." {
		return false
	}
	for i := 0; i < len(s); i++ {
		ch := s[i]
		if !(ch >= 'a' && ch <= 'z' || ch >= 'A' && ch <= 'Z' || ch >= '0' && ch <= '9' || ch == '_' || ch == '-' || ch == '.') {
			return false
		}
	}
	return true
}

func (k *checker) namespace(p []string, name string, ns *Namespace, env func(string) (string, bool)) {
	blocks := map[string]bool{
		"snowflake": ns.Snowflake != nil, "segment": ns.Segment != nil, "redis": ns.Redis != nil,
		"uuidv7": ns.UUIDv7 != nil, "objectid": ns.ObjectID != nil,
	}
	known := false
	for _, s := range Strategies() {
		if ns.Strategy == s {
			known = true
		}
	}
	switch {
	case ns.Strategy == "":
		k.add(append(p, "strategy"), "missing: give one of %s", strings.Join(Strategies(), ", "))
	case !known:
		k.add(append(p, "strategy"), "unknown strategy %q: use one of %s", ns.Strategy, strings.Join(Strategies(), ", "))
	}
	for _, s := range Strategies() {
		if blocks[s] && s != ns.Strategy {
			k.add(append(p, s), "settings for %s, but the strategy is %q: remove them or change the strategy", s, ns.Strategy)
		}
	}
	ns.Resolved = k.tokens(p, "tokens", "token_env", ns.Tokens, ns.TokenEnv, env)
	k.maxCount(append(p, "max_count"), ns.MaxCount)
	switch ns.Strategy {
	case "snowflake":
		if ns.Snowflake == nil {
			ns.Snowflake = &Snowflake{}
		}
		k.snowflake(append(p, "snowflake"), ns.Snowflake)
	case "segment":
		if ns.Segment == nil {
			ns.Segment = &Segment{}
		}
		k.segment(append(p, "segment"), name, ns.Segment)
	case "redis":
		if ns.Redis == nil {
			k.add(p, "strategy redis needs a redis: block with at least url: redis://host:6379/0")
			return
		}
		if err := engines.Check(engines.Strategy, ns.Strategy); err != nil {
			k.add(append(p, "strategy"), "%v", err)
		}
		k.redis(append(p, "redis"), name, ns.Redis)
	}
}

// layoutMsg is a layout error's message without the package's "layout: ",
// which the key it is reported under already says.
func layoutMsg(err error) string { return strings.TrimPrefix(err.Error(), "layout: ") }

func (k *checker) layout(p []string, text string) *layout.Layout {
	if text == "" {
		text = DefaultLayout
	}
	l, err := layout.Parse(text)
	if err != nil {
		k.add(p, "%s", layoutMsg(err))
		return nil
	}
	if l.Exhausted(time.Now()) {
		k.add(p, "layout %s ran out of time on %s: choose a layout with a later epoch or a longer time field", text, l.Lifetime().Format(time.DateOnly))
		return nil
	}
	return l
}

func (k *checker) snowflake(p []string, s *Snowflake) {
	l := k.layout(append(p, "layout"), s.Layout)
	if l != nil && s.Node != "" {
		if _, err := l.ParseNodeValues(s.Node); err != nil {
			k.add(append(p, "node"), "%s", layoutMsg(err))
		}
	}
	if l != nil && len(l.NodeFields()) == 0 {
		k.add(append(p, "layout"), "layout %s has no node field to lease; one server process per ID space would be needed, which the server cannot check: choose a layout with a node field", l)
	}
	if l != nil {
		var names []string
		for _, f := range l.NodeFields() {
			names = append(names, f.Name)
		}
		for i, f := range s.Lease.Fields {
			if !contains(names, f) {
				k.add(append(p, "lease", "fields", strconv.Itoa(i)), "the layout has no node field %q; its node fields are %s", f, strings.Join(names, ", "))
			}
		}
	}
	for _, f := range []struct {
		key, v string
		u      encoding.TextUnmarshaler
	}{{"overflow", s.Overflow, new(snowflake.OverflowPolicy)}, {"behind", s.Behind, new(snowflake.BehindPolicy)}, {"start", s.Start, new(snowflake.SequenceStart)}} {
		if err := f.u.UnmarshalText([]byte(f.v)); err != nil {
			k.add(append(p, f.key), "%v", strings.TrimPrefix(err.Error(), "snowflake: "))
		}
	}
	if s.Behind == "switch-node" {
		k.add(append(p, "behind"), "switch-node needs standby node values, which a leased namespace does not have: use logical (the default) or fail")
	}
	k.duration(append(p, "max_drift"), s.MaxDrift, false)
	k.duration(append(p, "wait_threshold"), s.WaitThreshold, false)
	if s.MaxDrift.IsSet() && s.Overflow != "borrow" && s.Behind == "fail" {
		k.add(append(p, "max_drift"), "applies only with overflow: borrow or behind: logical (the default)")
	}
	if s.RandomBelow < 0 || s.RandomBelow != 0 && s.StartPolicy() != "random" {
		k.add(append(p, "random_below"), "give a positive number, with start: random")
	}
	lp := append(p, "lease")
	if s.Lease.Store != "" {
		k.store(append(lp, "store"), s.Lease.Store, engines.LeaseStore, leaseSchemes())
	}
	if scheme, _, _ := strings.Cut(s.Lease.Store, "://"); strings.EqualFold(scheme, "leafzk") && l != nil && !IsLeafLayout(l) {
		k.add(append(p, "layout"), "a leafzk:// lease store takes its worker IDs from Leaf's registry, so the IDs must have Leaf's bits: use layout: leaf (41 bits of ms from 2010-11-04T01:42:54.657Z, a 10-bit worker, a 12-bit sequence)")
	}
	if s.Lease.Scope != "" {
		if err := leasestore.CheckScope(s.Lease.Scope); err != nil {
			k.add(append(lp, "scope"), "%v", err)
		}
	}
	if s.Lease.Fixed != nil && *s.Lease.Fixed < 0 {
		k.add(append(lp, "fixed"), "%d is negative", *s.Lease.Fixed)
	}
	timing := true // every timing key given is well-formed and within its bounds
	for _, d := range []struct {
		key   string
		v     Duration
		check func(time.Duration) error
	}{{"ttl", s.Lease.TTL, func(d time.Duration) error { return timingAlone(0, d, 0) }},
		{"window", s.Lease.Window, func(d time.Duration) error { return timingAlone(0, 0, d) }},
		{"budget", s.Lease.Budget, func(d time.Duration) error { return timingAlone(d, 0, 0) }}} {
		if !d.v.IsSet() {
			continue
		}
		if !k.duration(append(lp, d.key), d.v, false) {
			timing = false
			continue
		}
		if err := d.check(d.v.Or(0)); err != nil {
			k.add(append(lp, d.key), "%q: %v", d.v, strings.TrimPrefix(err.Error(), "lease: "))
			timing = false
		}
	}
	if timing {
		if _, err := lease.ResolveTiming(s.Lease.Budget.Or(0), s.Lease.TTL.Or(0), s.Lease.Window.Or(0)); err != nil {
			k.add(append(lp, "budget"), "%v", strings.TrimPrefix(err.Error(), "lease: "))
		}
	}
	var order lease.Order
	if err := order.UnmarshalText([]byte(s.Lease.Order)); err != nil {
		k.add(append(lp, "order"), "%v", strings.TrimPrefix(err.Error(), "lease: "))
	}
}

// timingAlone checks one timing key, the others at their defaults, so that an error
// is reported at the key at fault.
func timingAlone(budget, ttl, window time.Duration) error {
	_, err := lease.ResolveTiming(budget, ttl, window)
	return err
}

func (k *checker) segment(p []string, name string, s *Segment) {
	for i, u := range s.Stores {
		k.store(append(p, "stores", fmt.Sprint(i)), u, engines.SegmentStore, segmentSchemes())
	}
	if s.Residues != nil || s.Modulus != 0 {
		if _, _, err := segment.CheckResidues(max(len(s.Stores), 1), s.Residues, s.Modulus); err != nil {
			k.add(append(p, "residues"), "%s", strings.TrimPrefix(err.Error(), "segment: "))
		}
	}
	tag := s.Tag
	if tag == "" {
		tag = name
	}
	if err := segmentstore.CheckTagName(tag); err != nil {
		k.add(append(p, "tag"), "%v", err)
	}
	if s.Create != nil {
		step := s.Create.Step
		if step == 0 {
			step = DefaultSegmentStep
		}
		if err := segmentstore.CheckStep(step); err != nil {
			k.add(append(p, "create", "step"), "%v", err)
		}
		if s.Create.Start < 0 {
			k.add(append(p, "create", "start"), "%d is negative", s.Create.Start)
		}
	}
	k.duration(append(p, "runway"), s.Runway, false)
	k.duration(append(p, "target"), s.Target, false)
	k.duration(append(p, "fetch_timeout"), s.FetchTimeout, false)
	if s.MaxStep < 0 || s.MaxStep > segment.MaxStep {
		k.add(append(p, "max_step"), "%d is out of range 0..%d", s.MaxStep, int64(segment.MaxStep))
	}
	if s.Prefetch < 0 || s.Prefetch >= 1 {
		k.add(append(p, "prefetch"), "%v is out of range: give a share such as 0.1 (at least 0, below 1)", s.Prefetch)
	}
}

func (k *checker) redis(p []string, name string, r *Redis) {
	if r.URL == "" {
		k.add(append(p, "url"), "missing: give the Redis server, e.g. redis://127.0.0.1:6379/0")
	} else {
		k.url(append(p, "url"), r.URL, []string{"redis", "rediss", "redis+sentinel", "rediss+sentinel"})
	}
	l := k.layout(append(p, "layout"), r.Layout)
	if l != nil && r.Node != "" {
		if _, err := l.ParseNodeValues(r.Node); err != nil {
			k.add(append(p, "node"), "%s", layoutMsg(err))
		}
	}
	key := r.Key
	if key == "" {
		key = name
	}
	if strings.ContainsAny(key, "{} \t\r\n") || len(key) > 200 {
		k.add(append(p, "key"), "%q: no braces, spaces or control characters, at most 200 bytes", key)
	}
	if r.Checks != "" && !slices.Contains(RedisChecks(), r.Checks) {
		k.add(append(p, "checks"), "%q: give warn (the default: log what is not set up as docs/redisgen.md asks), refuse (do not start then) or off", r.Checks)
	}
	k.duration(append(p, "behind_wait"), r.BehindWait, true)
	if k.duration(append(p, "plain_window"), r.PlainWindow, true) && l != nil {
		// redisgen.New's bound (redisgen.DefaultPlainWindow, or the layout's
		// unit if longer), reported here with the key's line.
		if longest := max(10*time.Millisecond, l.Unit()); r.PlainWindow.d > longest {
			k.add(append(p, "plain_window"), "%q is longer than %v: the plain path assumes that a failover to a lagging replica takes longer than the window (a scripted promotion with a VIP move takes about 100 ms) and could issue IDs twice otherwise; leave it out for %v, or use -1ms to turn the plain path off", r.PlainWindow.text, longest, longest)
		}
	}
}

// CheckListen reports whether addr is a TCP address to listen on: host:port with
// a port from 0 to 65535 (0: any free port) or a service name, and a host that is
// empty (every interface), an IP address or a name.
func CheckListen(addr string) error {
	host, port, err := net.SplitHostPort(addr)
	if err != nil {
		return fmt.Errorf("%q is not host:port (e.g. 127.0.0.1:8080, or :8080 for every interface)", addr)
	}
	if port == "" {
		return fmt.Errorf("%q has no port: give host:port, e.g. 127.0.0.1:8080", addr)
	}
	if _, err := net.LookupPort("tcp", port); err != nil {
		return fmt.Errorf("%q: port %s is not a TCP port (0 to 65535)", addr, port)
	}
	if strings.ContainsAny(host, " /\\") {
		return fmt.Errorf("%q: host %q is not an address or a name", addr, host)
	}
	return nil
}

// url checks a URL's scheme against schemes, and returns it in lower case; ""
// when the URL is reported.
func (k *checker) url(p []string, raw string, schemes []string) string {
	u, _, _, err := storeurl.ParseWithHosts(raw) // accepts host lists: h1:5432,h2:5432
	if err != nil || u.Scheme == "" {
		if fu, ok := storeurl.FileURL(raw); ok && contains(schemes, "file") {
			k.add(p, "%q is not a store URL: for a directory write %s", raw, fu)
			return ""
		}
		k.add(p, "%q is not a store URL: use one of the schemes %s", lease.RedactURL(raw), strings.Join(schemes, ", "))
		return ""
	}
	scheme := strings.ToLower(u.Scheme)
	if !contains(schemes, scheme) {
		if f, ok := engines.ForName(engines.LeaseStore, scheme); ok {
			k.add(p, "%s:// names a %s lease store; there is no %s segment store: use one of %s", scheme, f.Name, f.Name, strings.Join(schemes, ", "))
			return ""
		}
		k.add(p, "unknown scheme %q: use one of %s", u.Scheme, strings.Join(schemes, ", "))
		return ""
	}
	return scheme
}

// store is url for the URL of a lease or segment store (kind): it also reports
// a scheme whose store package the program does not import, with what to do.
func (k *checker) store(p []string, raw string, kind engines.Kind, schemes []string) {
	if scheme := k.url(p, raw, schemes); scheme != "" {
		if err := engines.Check(kind, scheme); err != nil {
			k.add(p, "%v", err)
		}
	}
}

func contains(xs []string, x string) bool {
	for _, v := range xs {
		if v == x {
			return true
		}
	}
	return false
}

func sortStrings(xs []string) {
	for i := 1; i < len(xs); i++ {
		for j := i; j > 0 && xs[j] < xs[j-1]; j-- {
			xs[j], xs[j-1] = xs[j-1], xs[j]
		}
	}
}

// cors checks that each origin is one a browser sends: a scheme, a host and
// perhaps a port, nothing else.
func (k *checker) cors(c CORS) {
	seen := map[string]bool{}
	for i, o := range c.Origins {
		p := []string{"cors", "origins", strconv.Itoa(i)}
		if err := CheckOrigin(o); err != nil {
			k.add(p, "%v", err)
		} else if seen[o] {
			k.add(p, "origin %q is listed twice", o)
		}
		seen[o] = true
	}
	k.duration([]string{"cors", "max_age"}, c.MaxAge, false)
}

// CheckOrigin reports whether o is an origin as browsers send it in the Origin
// header: http or https, a host, perhaps a port, lowercase, with no path,
// query or trailing slash.
func CheckOrigin(o string) error {
	if o == "*" || o == "null" {
		return fmt.Errorf("origin %q would let any page call the API with the tokens it holds: list each origin, e.g. https://app.example.com", o)
	}
	u, err := url.Parse(o)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return fmt.Errorf("origin %q: give scheme://host[:port], e.g. https://app.example.com", o)
	}
	if u.Path != "" || u.RawQuery != "" || u.Fragment != "" || u.User != nil || strings.HasSuffix(o, "?") || strings.HasSuffix(o, "#") {
		return fmt.Errorf("origin %q has more than scheme://host[:port]: browsers send %q", o, u.Scheme+"://"+u.Host)
	}
	if o != strings.ToLower(o) {
		return fmt.Errorf("origin %q: browsers send origins in lowercase, %q", o, strings.ToLower(o))
	}
	return nil
}
