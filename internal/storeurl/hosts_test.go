package storeurl

import (
	"net/url"
	"slices"
	"strings"
	"testing"
)

func TestCutHosts(t *testing.T) {
	for _, tc := range []struct {
		raw   string
		hosts []string
		err   string
	}{
		{raw: "postgres://u:pw@h1:5432,h2:5433/db?x=1", hosts: []string{"h1:5432", "h2:5433"}},
		{raw: "postgres://u@[::1]:5432,[::1]:5433/db", hosts: []string{"[::1]:5432", "[::1]:5433"}},
		{raw: "redis+sentinel://:pw@s1,s2:26380,[fe80::1]/m/0", hosts: []string{"s1", "s2:26380", "[fe80::1]"}},
		{raw: "etcd://h:2379", hosts: []string{"h:2379"}},
		{raw: "sqlite:///abs.db"},
		{raw: "sqlite:rel.db"},
		{raw: "postgres://u@h1,,h2/db", err: "host 2 of the URL's host list: empty"},
		{raw: "postgres://u@h1:0/db", err: "port must be a number"},
		{raw: "postgres://u@h1:99999/db", err: "port must be a number"},
		{raw: "postgres://u@h1:/db", err: "empty port"},
		{raw: "postgres://u@[::1/db", err: "closing ]"},
		{raw: "postgres://u@[h1]:5432/db", err: "IPv6"},
		{raw: "postgres://u@h 1/db", err: "not allowed"},
	} {
		rest, hosts, err := CutHosts(tc.raw)
		if tc.err != "" {
			if err == nil || !strings.Contains(err.Error(), tc.err) {
				t.Errorf("CutHosts(%q) error %v; want %q", tc.raw, err, tc.err)
			}
			continue
		}
		if err != nil || !slices.Equal(hosts, tc.hosts) {
			t.Errorf("CutHosts(%q) = %q, %v; want %q", tc.raw, hosts, err, tc.hosts)
			continue
		}
		if got := hosts.Restore(rest); got != tc.raw {
			t.Errorf("Restore(%q) = %q; want %q", rest, got, tc.raw)
		}
	}
}

func TestParseWithHosts(t *testing.T) {
	u, hosts, red, err := ParseWithHosts("postgres://ann:hunter2@[::1]:5432,db2/x?target_session_attrs=read-write")
	if err != nil {
		t.Fatal(err)
	}
	if u.Scheme != "postgres" || u.Path != "/x" || u.User.Username() != "ann" || len(hosts) != 2 {
		t.Errorf("parsed %+v, hosts %q", u, hosts)
	}
	if red != "postgres://ann:xxxxx@[::1]:5432,db2/x?target_session_attrs=read-write" {
		t.Errorf("redacted %q", red)
	}
	if got := hosts.Addrs("5432"); !slices.Equal(got, []string{"[::1]:5432", "db2:5432"}) {
		t.Errorf("Addrs = %q", got)
	}
	if r := Redact("redis+sentinel://:hunter2@[::1]:26379,[::1]:26380/m"); r != "redis+sentinel://:xxxxx@[::1]:26379,[::1]:26380/m" {
		t.Errorf("Redact = %q", r)
	}
}

// FuzzCutHosts: CutHosts never panics, gives back what it took out, and never
// shows the password in an error.
func FuzzCutHosts(f *testing.F) {
	for _, s := range []string{"postgres://u:hunter2pw@h1:5432,[::1]:5433/db", "redis+sentinel://:hunter2pw@a,b:1/m/0?x=y", "etcd://h", "x://@/", "a://b@c@d,e", "p://u:hunter2pw@h:port/x"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, raw string) {
		rest, hosts, err := CutHosts(raw)
		if err != nil {
			if u, perr := url.Parse(raw); perr == nil && u.User != nil {
				if pw, ok := u.User.Password(); ok && len(pw) >= 6 && strings.Contains(err.Error(), pw) {
					t.Fatalf("error shows the password: %v", err)
				}
			}
			return
		}
		if got := hosts.Restore(rest); got != raw {
			t.Fatalf("Restore(CutHosts(%q)) = %q", raw, got)
		}
		for _, h := range hosts {
			if h == "" || strings.ContainsAny(h, ",/?#@ ") {
				t.Fatalf("host %q of %q", h, raw)
			}
		}
		_, _, red, _ := ParseWithHosts(raw)
		if u, perr := url.Parse(raw); perr == nil && u.User != nil {
			if pw, ok := u.User.Password(); ok && len(pw) >= 6 && strings.Contains(red, ":"+pw+"@") {
				t.Fatalf("Redact shows the password: %v", red)
			}
		}
	})
}
