package server

import (
	"bufio"
	"fmt"
	"io"
	"net"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/flurryid/flurry/verify/testenv"
)

// evalshaCalls returns how many EVALSHA calls the Redis at addr has served, from
// INFO commandstats, spoken in RESP by hand.
func evalshaCalls(t *testing.T, addr string) int {
	t.Helper()
	c, err := net.DialTimeout("tcp", addr, 5*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	c.SetDeadline(time.Now().Add(5 * time.Second))
	fmt.Fprint(c, "*2\r\n$4\r\nINFO\r\n$12\r\ncommandstats\r\n")
	br := bufio.NewReader(c)
	head, err := br.ReadString('\n')
	if err != nil || !strings.HasPrefix(head, "$") {
		t.Fatalf("INFO commandstats: %q %v", head, err)
	}
	n, _ := strconv.Atoi(strings.TrimSpace(head[1:]))
	body := make([]byte, n)
	if _, err := io.ReadFull(br, body); err != nil {
		t.Fatal(err)
	}
	m := regexp.MustCompile(`cmdstat_evalsha:calls=(\d+)`).FindSubmatch(body)
	if m == nil {
		return 0
	}
	calls, _ := strconv.Atoi(string(m[1]))
	return calls
}

// TestRedisPlainWindow: a redis namespace's plain_window reaches the generator.
// With -1ms every one-ID request runs the script; with 1s (the unit of the
// layout, so the longest window accepted) nearly none does. Each case has a
// Redis of its own, so other tests' calls are not counted.
func TestRedisPlainWindow(t *testing.T) {
	testenv.NeedScheme(t, "redis")
	const seconds = "'time:32:1s:2025-01-01T00:00:00Z,worker:10,seq:21'"
	for _, tc := range []struct {
		window, layout string
		min, max       int
	}{
		{"-1ms", "leaf", 100, 100},
		{"1s", seconds, 1, 20}, // renewed before the window ends: once or twice unless the machine stalls
	} {
		t.Run(tc.window, func(t *testing.T) {
			port := testenv.FreePort(t)
			testenv.StartRedis(t, port)
			addr := "127.0.0.1:" + strconv.Itoa(port)
			_, hs := newServer(t, "namespaces:\n  r:\n    strategy: redis\n    redis: {url: 'redis://"+addr+"/0', node: worker=5, layout: "+tc.layout+", plain_window: "+tc.window+"}\n", nil)
			before := evalshaCalls(t, addr)
			for range 100 {
				if code, _, body := get(t, hs.URL+"/v1/r/next?format=text"); code != 200 {
					t.Fatalf("%d %q", code, body)
				}
			}
			if got := evalshaCalls(t, addr) - before; got < tc.min || got > tc.max {
				t.Errorf("plain_window %s: %d script calls for 100 IDs, want %d to %d", tc.window, got, tc.min, tc.max)
			}
		})
	}
}
