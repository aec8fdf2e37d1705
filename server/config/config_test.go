package config

import (
	"errors"
	"os"
	"strings"
	"testing"

	"github.com/flurryid/flurry/internal/engines"
	"github.com/flurryid/flurry/verify/testenv"
)

func TestExampleFile(t *testing.T) {
	testenv.NeedScheme(t, "postgres")
	testenv.NeedScheme(t, "redis")
	b, err := os.ReadFile("../../docs/flurry.example.yaml")
	if err != nil {
		t.Fatal(err)
	}
	env := func(k string) (string, bool) { return "token-from-the-environment", k == "FLURRY_ORDERS_TOKEN" }
	c, err := Parse("flurry.example.yaml", b, env)
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"default", "orders", "segment", "tickets", "sessions", "documents"}
	if strings.Join(c.Order, ",") != strings.Join(want, ",") {
		t.Errorf("order %v, want %v", c.Order, want)
	}
	if got := c.Namespaces["orders"].Resolved; len(got) != 1 || got[0] != "token-from-the-environment" {
		t.Errorf("orders tokens %v", got)
	}
}

func TestDefault(t *testing.T) {
	if err := Default().Check(nil); err != nil {
		t.Fatal(err)
	}
}

func TestProblems(t *testing.T) {
	for _, c := range []struct {
		name, yaml string
		want       []string
	}{
		{"empty", "", []string{"empty"}},
		{"not yaml", "listen: [", []string{"not valid YAML"}},
		{"no namespaces", "listen: 127.0.0.1:1\n", []string{"namespaces: no namespace"}},
		{"typo", "namespaces:\n  a:\n    strategy: snowflake\n    snowflak: {}\n", []string{"configuration has 1 problem:\n", "t.yaml:4: namespaces.a.snowflak: unknown key"}},
		{"unknown nested key", "namespaces:\n  a:\n    strategy: snowflake\n    snowflake:\n      layout: twitter\n      colour: red\n", []string{"t.yaml:6: namespaces.a.snowflake.colour: unknown key"}},
		{"wrong types", "max_count: lots\nnamespaces:\n  a:\n    strategy: segment\n    segment: {stores: sqlite:///x.db, prefetch: [1]}\n  b: [x]\n",
			[]string{"configuration has 4 problems:\n", "t.yaml:1: max_count: lots is not a whole number", "t.yaml:5: namespaces.a.segment.stores: sqlite:", "is not a list", "t.yaml:5: namespaces.a.segment.prefetch: a list is not a number", "t.yaml:6: namespaces.b: a list is not a mapping"}},
		{"list items", "namespaces:\n  a:\n    strategy: segment\n    segment:\n      stores:\n        - sqlite:///x.db\n        - 'mongodb://x'\n  b:\n    strategy: snowflake\n    snowflake:\n      lease:\n        store: file:///tmp/l\n        fields:\n          - worker\n          - rack\n",
			[]string{"t.yaml:7: namespaces.a.segment.stores.1: ", "t.yaml:15: namespaces.b.snowflake.lease.fields.1: the layout has no node field \"rack\""}},
		{"every problem", "listen: x\nmax_count: -1\nshutdown_timeout: soon\ntls: {cert: a}\nnamespaces:\n  a:\n    strategy: snowflake\n    snowflake: {layout: twiter, overflow: fast}\n  b/c:\n    strategy: segment\n    segment: {prefetch: 1, stores: ['mongodb://x']}\n  d:\n    strategy: redis\n  e:\n    strategy: uuidv8\n",
			[]string{"t.yaml:1: listen", "t.yaml:2: max_count", "t.yaml:3: shutdown_timeout", "t.yaml:4: tls", "t.yaml:8: namespaces.a.snowflake.layout", "namespaces.a.snowflake.overflow", "namespaces.b/c: namespace name", "namespaces.b/c.segment.prefetch", "unknown scheme \"mongodb\"", "t.yaml:12: namespaces.d: strategy redis needs", "t.yaml:15: namespaces.e.strategy: unknown strategy"}},
		{"token env", "namespaces:\n  a: {strategy: objectid, token_env: [NOPE], tokens: [short]}\n", []string{"NOPE is not set", "token 1 is 5 characters"}},
		{"limits", "limits: {max_ids_in_flight: 5, read_timeout: 0s, write_timeout: soon, token_burst: 3, max_concurrent_streams: -1}\ntls: {client_ca: ca.pem}\naccess: {admin_tokens: ['sha256:abc'], admin_token_env: [NOPE]}\nnamespaces:\n  a: {strategy: uuidv7, max_count: 20000000, tokens: ['sha256:zz']}\n",
			[]string{"limits.max_ids_in_flight: 5 is too small", "limits.read_timeout: \"0s\" is zero", "limits.write_timeout", "limits.token_burst", "limits.max_concurrent_streams", "tls.client_ca", "t.yaml:3: access.admin_tokens.0: token 1 starts with sha256:", "t.yaml:3: access.admin_token_env.0: environment variable NOPE", "namespaces.a.max_count: 20000000 is out of range", "namespaces.a.tokens.0: token 1 starts with sha256:"}},
		{"wrong block", "namespaces:\n  a: {strategy: segment, snowflake: {}}\n", []string{"settings for snowflake"}},
		{"exhausted", "namespaces:\n  a: {strategy: snowflake, snowflake: {layout: baidu}}\n", []string{"ran out of time"}},
		{"no node field", "namespaces:\n  a: {strategy: snowflake, snowflake: {layout: mastodon}}\n", []string{"no node field"}},
		// A TTL whose deadlines overflow int64 nanoseconds passed the check, and the
		// server then answered 503 forever; a port past 65535 passed too.
		{"lease bounds", "listen: 127.0.0.1:99999\nnamespaces:\n  a:\n    strategy: snowflake\n    snowflake:\n      lease:\n        ttl: 2500000h\n        window: 2h\n        order: newest\n",
			[]string{"t.yaml:1: listen: \"127.0.0.1:99999\": port 99999", "t.yaml:7: namespaces.a.snowflake.lease.ttl: \"2500000h\"", "from 1s to 24h", "t.yaml:8: namespaces.a.snowflake.lease.window: \"2h\"", "t.yaml:9: namespaces.a.snowflake.lease.order"}},
		{"lease too short", "namespaces:\n  a: {strategy: snowflake, snowflake: {lease: {ttl: 500ms, window: 10ms}}}\n", []string{"lease.ttl: \"500ms\"", "lease.window: \"10ms\""}},
		{"listen", "listen: 'host:'\nnamespaces:\n  a: {strategy: objectid}\n", []string{"t.yaml:1: listen", "no port"}},
		// A slip gets "did you mean", and none of what the mapping read without the
		// key meant: strategy missing, a node field of the default layout.
		{"slip of strategy", "namespaces:\n  orders:\n    stratgey: snowflake\n", []string{"configuration has 1 problem:\n", "t.yaml:3: namespaces.orders.stratgey: unknown key; did you mean strategy?"}},
		{"slip of layout", "namespaces:\n  game:\n    strategy: snowflake\n    snowflake:\n      layuot: gameserver\n      node: platform=1\n",
			[]string{"configuration has 1 problem:\n", "t.yaml:5: namespaces.game.snowflake.layuot: unknown key; did you mean layout?"}},
		{"slip of namespaces", "namespacse:\n  a: {strategy: objectid}\n", []string{"configuration has 1 problem:\n", "t.yaml:1: namespacse: unknown key; did you mean namespaces?"}},
		{"slip of a preset", "namespaces:\n  a: {strategy: snowflake, snowflake: {layout: twiter}}\n", []string{"namespaces.a.snowflake.layout: unknown preset \"twiter\"; did you mean twitter?"}},
		{"not ASCII", "namespaces:\n  ordérs: {strategy: objectid}\n", []string{"use 1 to 64 ASCII letters"}},
		{"a directory as a store", "namespaces:\n  a: {strategy: segment, segment: {stores: [/var/lib/ids]}}\n", []string{"\"/var/lib/ids\" is not a store URL: for a directory write file:///var/lib/ids"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			_, err := Parse("t.yaml", []byte(c.yaml), nil)
			if !errors.Is(err, ErrInvalid) {
				t.Fatalf("got %v, want ErrInvalid", err)
			}
			for _, w := range c.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("no %q in:\n%v", w, err)
				}
			}
			// No Go type names or yaml.v3 wording reach the operator.
			for _, bad := range []string{"config.", "!!", "unmarshal", "[]string", "int64", "(in ", "layout: layout:"} {
				if strings.Contains(err.Error(), bad) {
					t.Errorf("%q in:\n%v", bad, err)
				}
			}
		})
	}
}

func TestLeaseOrderAndListen(t *testing.T) {
	c, err := Parse("t.yaml", []byte("listen: ':http'\nnamespaces:\n  a: {strategy: snowflake, snowflake: {lease: {order: value, ttl: 24h, window: 1h}}}\n"), nil)
	if err != nil {
		t.Fatal(err)
	}
	if got := c.Namespaces["a"].Snowflake.Lease.Order; got != "value" {
		t.Errorf("order %q", got)
	}
	for _, ok := range []string{"127.0.0.1:0", ":8080", "[::1]:65535", "localhost:8080"} {
		if err := CheckListen(ok); err != nil {
			t.Errorf("CheckListen(%q): %v", ok, err)
		}
	}
	for _, bad := range []string{"127.0.0.1:99999", "127.0.0.1:-1", "127.0.0.1", "127.0.0.1:", "a b:80", ":65536"} {
		if err := CheckListen(bad); err == nil {
			t.Errorf("CheckListen(%q) accepted", bad)
		}
	}
}

// TestNotBuiltSchemes: a store URL of an engine family this program leaves out is
// a problem on its own line, naming the build tag (in flurry's own builds). A full
// build has none to check; a redis namespace is refused at its strategy key.
func TestNotBuiltSchemes(t *testing.T) {
	for _, f := range engines.Families() {
		if engines.Has(engines.LeaseStore, f.Schemes[0]) || engines.Has(engines.SegmentStore, f.Schemes[0]) {
			continue
		}
		yaml := "namespaces:\n  a:\n    strategy: snowflake\n    snowflake:\n      lease:\n        store: " + f.Schemes[0] + "://h:1/x\n" +
			"  b:\n    strategy: segment\n    segment:\n      stores:\n        - file:///tmp/x\n        - " + f.Schemes[0] + "://h:1/y\n"
		_, err := Parse("c.yaml", []byte(yaml), nil)
		if err == nil {
			t.Errorf("%s URLs accepted in a build without %s", f.Schemes[0], f.Tag)
			continue
		}
		seg := "c.yaml:12: namespaces.b.segment.stores.1: " + f.Schemes[0] + ":// needs a flurry built with -tags " + f.Tag
		if f.Package(engines.SegmentStore) == "" {
			// Leases only (ZooKeeper): no tag would help.
			seg = "c.yaml:12: namespaces.b.segment.stores.1: " + f.Schemes[0] + ":// names a " + f.Name + " lease store; there is no " + f.Name + " segment store"
		}
		for _, want := range []string{
			"c.yaml:6: namespaces.a.snowflake.lease.store: " + f.Schemes[0] + ":// needs a flurry built with -tags " + f.Tag + " (or flurry_full)",
			seg,
		} {
			if !strings.Contains(err.Error(), want) {
				t.Errorf("problems %q lack %q", err, want)
			}
		}
	}
	if !engines.Has(engines.Strategy, "redis") {
		_, err := Parse("c.yaml", []byte("namespaces:\n  r:\n    strategy: redis\n    redis: {url: 'redis://h:1/0'}\n"), nil)
		want := "c.yaml:3: namespaces.r.strategy: the redis strategy needs a flurry built with -tags flurry_redis (or flurry_full)"
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("a redis namespace without the strategy: %v; want %q", err, want)
		}
	}
}
