package redisconn

import (
	"context"
	"errors"
	"net"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/flurryid/flurry/internal/bound"
	"github.com/flurryid/flurry/verify/testenv"
)

// TestRefusedDial: a dial that Open's dialer reports on the connection's first use
// still reaches the caller as the dial's *net.OpError, naming the address, and
// every call dials again: none fails with go-redis's remembered dial error without
// a dial of its own.
func TestRefusedDial(t *testing.T) {
	addr := "127.0.0.1:" + strconv.Itoa(testenv.FreePort(t))
	c, err := ParseClientURL("redis://" + addr + "/0?pool_size=1&max_retries=-1")
	if err != nil {
		t.Fatal(err)
	}
	var dials atomic.Int64
	c.Client.Dialer = func(ctx context.Context, network, addr string) (net.Conn, error) {
		dials.Add(1)
		return (&net.Dialer{}).DialContext(ctx, network, addr)
	}
	c.dial(new(bound.Conns))
	client := c.NewClient()
	defer client.Close()
	for i := 1; i <= 5; i++ {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		err := client.Ping(ctx).Err()
		cancel()
		oe, ok := errors.AsType[*net.OpError](err)
		if !ok || oe.Op != "dial" || !strings.Contains(err.Error(), addr) {
			t.Fatalf("ping %d of a closed port: %v (%T); want the dial's *net.OpError naming %s", i, err, err, addr)
		}
		if dials.Load() != int64(i) {
			t.Fatalf("after %d pings, %d dials; want one per ping (max_retries=-1)", i, dials.Load())
		}
	}
}
