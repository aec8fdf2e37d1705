package redisconn

import (
	"net/url"
	"slices"
	"strings"
	"testing"
	"time"
)

func TestParseSentinelURL(t *testing.T) {
	o, err := ParseURL("redis+sentinel://ann:hunter2@s1:26379,s2,[::1]:26381/mymaster/3?prefix=p&wait_replicas=1&dial_timeout=2s&sentinel_password=hunter3&request_timeout=7s", "pkg")
	if err != nil {
		t.Fatal(err)
	}
	c, s := Config{Client: o.Client, Failover: o.Failover}, o.Settings
	f := c.Failover
	if f == nil || c.Client != nil {
		t.Fatalf("config %+v", c)
	}
	if f.MasterName != "mymaster" || f.DB != 3 || f.Username != "ann" || f.Password != "hunter2" || f.SentinelPassword != "hunter3" ||
		f.DialTimeout != 2*time.Second || !f.ContextTimeoutEnabled || !slices.Equal(f.SentinelAddrs, []string{"s1:26379", "s2:26379", "[::1]:26381"}) {
		t.Errorf("failover options %+v", f)
	}
	if s.Prefix != "p" || s.WaitReplicas != 1 || s.RequestTimeout != 7*time.Second {
		t.Errorf("settings %+v", s)
	}
	if oc, err := config(o); err != nil || strings.Contains(oc.Redacted, "hunter") || oc.Redacted != "redis+sentinel://s1:26379,s2:26379,[::1]:26381/mymaster/3" {
		t.Errorf("Open's name %q, %v", oc.Redacted, err)
	}
	if cc, err := ParseClientURL("redis+sentinel://ann:hunter2@s1:26379,s2,[::1]:26381/mymaster/3?sentinel_password=hunter3"); err != nil ||
		strings.Contains(cc.Redacted, "hunter") || !strings.Contains(cc.Redacted, "s1:26379,s2,[::1]:26381/mymaster/3") {
		t.Errorf("redacted %q, %v", cc.Redacted, err)
	}
	if c.DialTimeout() != 2*time.Second {
		t.Errorf("DialTimeout %v", c.DialTimeout())
	}
	if cl := c.NewClient(); cl == nil {
		t.Error("no client")
	} else {
		cl.Close()
	}

	o, err = ParseURL("rediss+sentinel://s1/m", "pkg")
	if err != nil || o.Failover.TLSConfig == nil || o.Failover.DB != 0 || o.Failover.SentinelAddrs[0] != "s1:26379" {
		t.Errorf("rediss+sentinel: %+v, %v", o.Failover, err)
	}
}

func TestParseURLErrors(t *testing.T) {
	for _, tc := range []struct{ url, want string }{
		{"redis+sentinel://s1:26379", "the path must be /master"},
		{"redis+sentinel://s1:26379/m/0/1", "the path must be /master"},
		{"redis+sentinel://s1:26379/m/x", `database "x"`},
		{"redis+sentinel://s1:26379/m?master_name=n", "option master_name"},
		{"redis+sentinel://s1:26379/m?addr=s2:1", "option addr"},
		{"redis+sentinel://s1:26379/m?bogus=1", "unexpected option: bogus"},
		{"redis+sentinel:///m", "name the sentinels"},
		{"redis://h1:1,h2:2/0", "redis+sentinel://"},
		{"http://h:1", "scheme must be"},
		{"redis://h:1/0?request_timeout=0", "request_timeout"},
		{"redis+sentinel://:hunter2pw@s1:26379/m?sentinel_password=hunter3pw&bogus=1", "sentinel_password=xxxxx"},
	} {
		_, err := ParseURL(tc.url, "pkg")
		if err == nil || !strings.Contains(err.Error(), tc.want) || strings.Contains(err.Error(), "hunter") {
			t.Errorf("ParseURL(%q) error %v; want %q, no password", tc.url, err, tc.want)
		}
	}
}

func TestParseClientURL(t *testing.T) {
	c, err := ParseClientURL("redis://:pw@127.0.0.1:6379/2?dial_timeout=1s")
	if err != nil || c.Client.Addr != "127.0.0.1:6379" || c.Client.DB != 2 || !c.Client.ContextTimeoutEnabled || c.DialTimeout() != time.Second {
		t.Fatalf("%+v, %v", c.Client, err)
	}
	if _, err := ParseClientURL("redis://h:1/0?prefix=x"); err == nil {
		t.Error("a store key is refused by ParseClientURL")
	}
}

// FuzzParseURL: the parser never panics and never shows a password.
func FuzzParseURL(f *testing.F) {
	for _, s := range []string{
		"redis://:hunter2pw@127.0.0.1:6379/0?prefix=p",
		"redis+sentinel://u:hunter2pw@a:1,b:2/m/0?sentinel_password=hunter3pw",
		"rediss+sentinel://[::1]:26379,[::2]/m",
		"redis+sentinel://:hunter2pw@a/m/x?db=1",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, raw string) {
		o, err := ParseURL(raw, "pkg")
		var msg string
		if err != nil {
			msg = err.Error()
		} else if c, err := config(o); err == nil {
			msg = c.Redacted
		}
		if u, perr := url.Parse(raw); perr == nil && u.User != nil {
			if pw, ok := u.User.Password(); ok && len(pw) >= 6 && strings.Contains(msg, ":"+pw+"@") {
				t.Fatalf("%q shows the password", msg)
			}
		}
		if i := strings.Index(raw, "sentinel_password=hunter3pw"); i >= 0 && strings.Contains(msg, "hunter3pw") {
			t.Fatalf("%q shows the sentinel password", msg)
		}
	})
}
