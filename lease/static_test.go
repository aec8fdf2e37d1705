package lease

import (
	"bytes"
	"log/slog"
	"net"
	"strings"
	"testing"
)

func TestOrdinal(t *testing.T) {
	for _, tc := range []struct {
		host string
		want int64
		ok   bool
	}{{"orders-3", 3, true}, {"my-app-db-12", 12, true}, {"orders", 0, false}, {"orders-", 0, false}, {"orders-x", 0, false}, {"-3", 0, false}} {
		got, err := Ordinal(tc.host)
		if (err == nil) != tc.ok || got != tc.want {
			t.Errorf("Ordinal(%q) = %d, %v", tc.host, got, err)
		}
	}
}

func TestFromIPWarns(t *testing.T) {
	var buf bytes.Buffer
	log := slog.New(slog.NewTextHandler(&buf, nil))
	a, _ := FromIP(net.ParseIP("10.0.1.5"), 5, log)
	b, _ := FromIP(net.ParseIP("10.0.9.5"), 5, log)
	if a != 5 || b != 5 {
		t.Errorf("values %d %d; both hosts keep the low 5 bits, 5", a, b)
	}
	if !strings.Contains(buf.String(), "collide") || strings.Count(buf.String(), "level=WARN") != 2 {
		t.Errorf("no warning naming the collision risk: %s", buf.String())
	}
	if v, err := FromIP(net.ParseIP("2001:db8::1"), 10, log); err != nil || v < 0 || v >= 1024 {
		t.Errorf("IPv6: %d, %v", v, err)
	}
	if _, err := FromIP(net.ParseIP("10.0.0.1"), 0, log); err == nil {
		t.Error("0 bits accepted")
	}
}
