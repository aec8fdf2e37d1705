package redisgen

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"

	"github.com/redis/go-redis/v9"
)

// ErrUnchecked is wrapped by the error of CheckRedis when the server would not
// say how it is set up: CONFIG or INFO renamed or forbidden (managed services
// often do), or not answered. Nothing is known then about the settings below.
var ErrUnchecked = errors.New("redisgen: could not check the Redis server's settings")

// Finding is one setting of the Redis server that IDs' uniqueness relies on and
// that CheckRedis found otherwise.
type Finding struct {
	// Setting names it: min-replicas-to-write, connected replicas (INFO
	// replication's connected_slaves) or appendonly.
	Setting string
	// Have is its value on the server; Want what docs/redisgen.md asks for.
	Have, Want string
	// Risk says what goes wrong without it: the duplicate it prevents.
	Risk string
}

func (f Finding) String() string {
	return fmt.Sprintf("%s is %s (want %s): %s", f.Setting, f.Have, f.Want, f.Risk)
}

// CheckRedis reads the settings of the primary that serves the namespace
// (CONFIG GET min-replicas-to-write and appendonly, INFO replication) and
// returns those that differ from what docs/redisgen.md asks for, each with the
// duplicate it prevents. A primary with no replica is taken for a lone server
// (no failover, so no two primaries): only appendonly applies to it, unless the
// client follows Sentinel, where replicas are the point. An error wrapping
// ErrUnchecked means the server would not tell (the findings then cover only
// what it did tell).
func (g *Generator) CheckRedis(ctx context.Context) ([]Finding, error) {
	if g.closed.Load() {
		return nil, ErrClosed
	}
	c := redis.Cmdable(g.client)
	if cc, ok := g.client.(*redis.ClusterClient); ok {
		m, err := cc.MasterForKey(ctx, g.keys[0])
		if err != nil {
			return nil, fmt.Errorf("%w: namespace %q: finding the shard of %s: %w", ErrUnchecked, g.ns, g.keys[0], err)
		}
		c = m
	}
	var fs []Finding
	var unchecked []string
	info, err := c.Info(ctx, "replication").Result()
	replicas := -1
	if err == nil {
		replicas = infoInt(info, "connected_slaves")
	}
	if replicas < 0 {
		unchecked = append(unchecked, fmt.Sprintf("INFO replication: %v", orText(err, "no connected_slaves field")))
	}
	// A Sentinel URL means a replicated deployment even while the primary has
	// no replica connected.
	replicated := replicas > 0 || strings.Contains(g.where, "sentinel")
	if replicated {
		switch v, err := configGet(ctx, c, "min-replicas-to-write"); {
		case err != nil:
			unchecked = append(unchecked, "CONFIG GET min-replicas-to-write: "+err.Error())
		case atoi(v) < 1:
			fs = append(fs, Finding{Setting: "min-replicas-to-write", Have: v, Want: "1 (with min-replicas-max-lag 5 or so)",
				Risk: "after a failover or a fail-back the old primary answers as a primary until Sentinel demotes it (11 s in the fault harness), and clients still on it issue the same IDs as clients of the new one (1,000 duplicates there); with 1 the old primary, which no replica follows any more, refuses writes"})
		}
		if replicas >= 0 && replicas < 2 {
			fs = append(fs, Finding{Setting: "connected replicas", Have: strconv.Itoa(replicas), Want: "2",
				Risk: "with min-replicas-to-write 1 and one replica, a new primary has no replica to write with and every call is refused until the old one is back; lowering min-replicas-to-write to 0 to avoid that brings back the old primary's duplicates"})
		}
	}
	switch v, err := configGet(ctx, c, "appendonly"); {
	case err != nil:
		unchecked = append(unchecked, "CONFIG GET appendonly: "+err.Error())
	case v != "yes":
		fs = append(fs, Finding{Setting: "appendonly", Have: v, Want: "yes",
			Risk: "a restart (or a replica promoted before it synced) loses the node key and the counter: only Redis TIME, and the last tick and the clock of the client that writes the node value back, then keep new IDs above the old ones: a server that issued them with a clock ahead of all of those gets them issued again"})
	}
	if len(unchecked) > 0 {
		return fs, fmt.Errorf("%w: namespace %q on %s: %s (CONFIG may be renamed or forbidden, as on managed services: check these settings by hand)",
			ErrUnchecked, g.ns, g.where, strings.Join(unchecked, "; "))
	}
	return fs, nil
}

// configGet reads one CONFIG parameter.
func configGet(ctx context.Context, c redis.Cmdable, name string) (string, error) {
	m, err := c.ConfigGet(ctx, name).Result()
	if err != nil {
		return "", err
	}
	v, ok := m[name]
	if !ok {
		return "", fmt.Errorf("no %s in the answer", name)
	}
	return v, nil
}

// infoInt reads field name of an INFO answer as a number, or -1.
func infoInt(info, name string) int {
	for l := range strings.Lines(info) {
		if v, ok := strings.CutPrefix(strings.TrimSpace(l), name+":"); ok {
			if n, err := strconv.Atoi(v); err == nil {
				return n
			}
		}
	}
	return -1
}

func atoi(s string) int {
	n, err := strconv.Atoi(s)
	if err != nil {
		return -1
	}
	return n
}

func orText(err error, otherwise string) string {
	if err != nil {
		return err.Error()
	}
	return otherwise
}
