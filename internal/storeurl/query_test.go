package storeurl

import (
	"strings"
	"testing"
	"time"
)

func TestQuery(t *testing.T) {
	q, err := NewQuery("table=t&request_timeout=3s&extra=1")
	if err != nil {
		t.Fatal(err)
	}
	d := time.Second
	if q.Take("table") != "t" || q.Take("absent") != "" {
		t.Error("Take")
	}
	q.Duration("request_timeout", &d)
	if d != 3*time.Second {
		t.Errorf("Duration: %v", d)
	}
	if err := q.Remaining(); err == nil || err.Error() != "unknown key extra" {
		t.Errorf("Remaining: %v", err)
	}
	if !q.Has("extra") || q.Rest().Get("extra") != "1" {
		t.Error("Rest lost the key left over")
	}
	for raw, want := range map[string]string{
		"a=1&a=2":      "key a is given 2 times",
		"a=":           "key a has no value",
		"a=soon":       "a=soon: use a positive duration such as 5s",
		"a=0s":         "a=0s: use a positive duration",
		"a=-1s&a=soon": "key a is given 2 times",
	} {
		q, err := NewQuery(raw)
		if err != nil {
			t.Fatal(err)
		}
		var d time.Duration
		q.Duration("a", &d)
		if err := q.Remaining(); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%s: %v; want %q", raw, err, want)
		}
	}
	if _, err := NewQuery("a=%zz"); err == nil {
		t.Error("a bad escape accepted")
	}
}

func TestRedactQueryPasswords(t *testing.T) {
	for in, want := range map[string]string{
		"redis+sentinel://:pw@h:26379/m?sentinel_password=hunter2&db=1": "redis+sentinel://:xxxxx@h:26379/m?sentinel_password=xxxxx&db=1",
		"redis://h:1/0?Password=hunter2#frag":                           "redis://h:1/0?Password=xxxxx#frag",
		"etcd://h:1/p?dial_timeout=1s":                                  "etcd://h:1/p?dial_timeout=1s",
	} {
		if got := Redact(in); got != want {
			t.Errorf("Redact(%q) = %q; want %q", in, got, want)
		}
	}
}
