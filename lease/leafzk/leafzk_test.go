package leafzk

import (
	"errors"
	"fmt"

	"context"
	"github.com/go-zookeeper/zk"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/flurryid/flurry/internal/zkconn"
	"github.com/flurryid/flurry/layout"
	"github.com/flurryid/flurry/lease"
	"github.com/flurryid/flurry/snowflake"
	"github.com/flurryid/flurry/verify/conformance"
	"github.com/flurryid/flurry/verify/testenv"
)

// zkServers returns the test ensemble's members (testenv.ZooKeeper), skipping
// the test when it does not answer.
func zkServers(t testing.TB) []string {
	t.Helper()
	o, err := zkconn.ParseURL(testenv.ZooKeeper.URL(t), "test")
	if err != nil {
		t.Fatal(err)
	}
	return o.Servers
}

// leafName is a leaf.name of the test's own: a registry no other test touches,
// deleted when the test ends.
func leafName(t testing.TB) string {
	var b strings.Builder
	for _, c := range t.Name() {
		if c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' {
			b.WriteRune(c)
		}
	}
	name := "leafzktest." + b.String() + "." + conformance.Suffix()
	servers := zkServers(t)
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		c, err := zkconn.Open(ctx, zkconn.Options{Servers: servers, Prefix: "snowflake/" + name}, zkconn.Kind{Package: "test"})
		if err != nil {
			return
		}
		defer c.Close()
		deleteTree(ctx, c, c.Prefix, 2)
	})
	return name
}

// deleteTree deletes path and everything under it down to depth levels (a
// registry has two: forever and flurry, then their nodes), best effort.
func deleteTree(ctx context.Context, c *zkconn.Conn, path string, depth int) {
	kids, err := c.Children(ctx, path)
	if err != nil {
		return
	}
	var ops []any
	for _, k := range kids {
		if depth > 1 {
			deleteTree(ctx, c, path+"/"+k, depth-1)
		}
	}
	for _, k := range kids {
		ops = append(ops, &zk.DeleteRequest{Path: path + "/" + k, Version: -1})
		if len(ops) == 200 {
			c.Multi(ctx, ops...)
			ops = ops[:0]
		}
	}
	if len(ops) > 0 {
		c.Multi(ctx, ops...)
	}
	c.Delete(ctx, path, -1)
}

// openStore opens a store on registry name, with fresh= at its shortest so that
// tests wait little for a stopped Leaf server's node. The probe is off: the Leaf
// servers of leafsim_test.go serve no HTTP, and their made-up addresses may
// reach whatever answers there (tests of the probe turn it on).
func openStore(t testing.TB, servers []string, name string, set func(*Options)) *Store {
	t.Helper()
	o := Options{ZK: zkconn.Options{Servers: servers}, Name: name, Fresh: minFresh, ProbeTimeout: 300 * time.Millisecond, NoProbe: true}
	set(&o)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	st, err := Open(ctx, o)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	return st
}

func leafLayout(testing.TB) *layout.Layout {
	l, _ := layout.Lookup("leaf") // a preset: never an error
	return l
}

// startFlurry starts a generator on st as flurry serve does for a Leaf namespace
// (Leaf's layout and random start, behind: logical within a minute, a journal in
// dir), waiting up to wait for its lease. It may run in a goroutine of the test.
func startFlurry(t testing.TB, st *Store, dir string, wait time.Duration) (*snowflake.Generator, *lease.Session, error) {
	t.Helper()
	j, err := lease.OpenJournal(filepath.Join(dir, "journal.json"))
	if err != nil {
		return nil, nil, err
	}
	ctx, cancel := context.WithTimeout(context.Background(), wait)
	defer cancel()
	g, s, err := lease.NewGenerator(ctx,
		// One namespace per registry: tests run at once in this process, and the
		// in-process guard refuses two generators of one worker ID in a namespace.
		snowflake.Options{Layout: leafLayout(t), Namespace: st.o.Name, Start: snowflake.StartRandom, Behind: snowflake.Logical, MaxDrift: time.Minute},
		lease.Options{Store: st, Journal: j, Scope: "default"})
	if err != nil {
		j.Close()
		return nil, nil, err
	}
	t.Cleanup(func() {
		s.Close()
		g.Close()
		j.Close()
	})
	return g, s, nil
}

// issue takes n IDs from g, whose lease s holds. It rides out the refusals that
// come while s has lost nothing: on a loaded machine a renewal can come after the
// journal's short mark ran out, and Next refuses until it lands. A loss of the
// lease, or refusals for 30 s, fail the test.
func issue(t testing.TB, g *snowflake.Generator, s *lease.Session, n int) []int64 {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	out := make([]int64, 0, n)
	for len(out) < n {
		id, err := g.Next(ctx)
		if errors.Is(err, lease.ErrLost) && s.Status().Losses == 0 && ctx.Err() == nil {
			time.Sleep(time.Millisecond) // until the renewal lands
			continue
		}
		if err != nil {
			t.Fatalf("Next after %d IDs: %v (session %+v)", len(out), err, s.Status())
		}
		out = append(out, int64(id))
	}
	return out
}

func workerOf(id int64) int64 { return id >> 12 & 1023 }
func msOf(id int64) int64     { return id>>22 + leafEpoch }

// checkUnique fails on an ID in more than one of the sets.
func checkUnique(t testing.TB, sets map[string][]int64) {
	t.Helper()
	seen := map[int64]string{}
	dups := 0
	for who, ids := range sets {
		for _, id := range ids {
			if prev, ok := seen[id]; ok {
				if dups++; dups <= 5 {
					t.Errorf("ID %d (worker %d, ms %d) issued by %s and by %s", id, workerOf(id), msOf(id), prev, who)
				}
			}
			seen[id] = who
		}
	}
	if dups > 0 {
		t.Fatalf("%d duplicate IDs", dups)
	}
}

func maxOf(ids []int64) int64 {
	m := int64(-1)
	for _, id := range ids {
		m = max(m, id)
	}
	return m
}

func minOf(ids []int64) int64 {
	m := ids[0]
	for _, id := range ids {
		m = min(m, id)
	}
	return m
}

// TestTakeOverLeafNode replaces a Leaf server in place, and rolls back. A Leaf
// server registered as SnowflakeZookeeperHolder does writes its timestamp T and
// goes on issuing, with Leaf's algorithm, for 7 s of its clock before it dies
// (3 s to its next write, then 4 s of a slow write, a JVM pause or its clock
// stepping forward, all of which the default margin of 10 s covers). A flurry
// server at the same address takes the node's worker ID once the node has been
// left alone, and issues above every ID the Leaf server issued (its first ID above
// T + margin), without a duplicate. It keeps the node Leaf's: a Leaf server
// restarted at that address after flurry stopped passes checkInitTimeStamp, gets
// the same worker ID and issues above every flurry ID.
func TestTakeOverLeafNode(t *testing.T) {
	t.Parallel()
	servers := zkServers(t)
	name := leafName(t)
	const addr = "10.1.0.5:8080"

	// Another Leaf server, stopped long ago, so that the registry is not empty.
	other := newLeaf(t, servers, name, "10.1.0.4:8080", nil)
	if err := other.init(context.Background()); err != nil {
		t.Fatal(err)
	}
	other.halt()

	// The Leaf server to replace: its clock stands at T for its first write.
	T := time.Now().UnixMilli()
	var leafNow = T
	leaf := newLeaf(t, servers, name, addr, func() int64 { return leafNow })
	if err := leaf.init(context.Background()); err != nil {
		t.Fatal(err)
	}
	leaf.halt()          // the test writes for it
	leaf.updateNewData() // T, its last write
	var leafIDs []int64
	for ms := T; ms < T+7000; ms += 3 {
		leafNow = ms
		for range 5 {
			id, err := leaf.get()
			if err != nil {
				t.Fatal(err)
			}
			leafIDs = append(leafIDs, id)
		}
	}
	if leaf.workerID != 1 {
		t.Fatalf("the Leaf server has worker ID %d; the registry's second server gets 1", leaf.workerID)
	}

	st := openStore(t, servers, name, func(o *Options) { o.Addr = addr })
	g, s, err := startFlurry(t, st, t.TempDir(), 30*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	if v := s.Status().Value; v != leaf.workerID {
		t.Fatalf("flurry took worker ID %d; the node of %s has %d", v, addr, leaf.workerID)
	}
	flurryIDs := issue(t, g, s, 2000)
	checkUnique(t, map[string][]int64{"the Leaf server": leafIDs, "flurry": flurryIDs})
	if first := flurryIDs[0]; msOf(first) <= T+DefaultMargin.Milliseconds() || first <= maxOf(leafIDs) {
		t.Fatalf("flurry's first ID %d (ms %d) is not above the Leaf server's last ID %d (ms %d) and its last timestamp %d plus the margin",
			first, msOf(first), maxOf(leafIDs), msOf(maxOf(leafIDs)), T)
	}
	for _, id := range flurryIDs {
		if workerOf(id) != leaf.workerID {
			t.Fatalf("flurry's ID %d has worker %d", id, workerOf(id))
		}
	}

	// While flurry runs, the node is kept current as Leaf keeps it.
	waitFor(t, "flurry writes the node's timestamp", func() bool {
		ts, _ := nodeTimestamp(t, leaf.conn, leaf.forever, addr)
		return ts > T
	})

	// Roll back: stop flurry, start Leaf at the address again.
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	last := maxOf(flurryIDs)
	ts, _ := nodeTimestamp(t, leaf.conn, leaf.forever, addr)
	if ts <= msOf(last) {
		t.Fatalf("after flurry stopped the node's timestamp is %d, not above its last ID's ms %d: a Leaf server started now could issue below flurry's IDs", ts, msOf(last))
	}
	// flurry issued ahead of its clock (above the margin); a Leaf server starting
	// before its clock has passed the node's timestamp fails checkInitTimeStamp,
	// as it should. Wait for the clock.
	waitFor(t, "the clock to pass the node's timestamp", func() bool { return time.Now().UnixMilli() >= ts })
	back := newLeaf(t, servers, name, addr, nil)
	if err := back.init(context.Background()); err != nil {
		t.Fatalf("Leaf started again at %s after flurry: %v", addr, err)
	}
	if back.workerID != leaf.workerID {
		t.Fatalf("Leaf started again with worker ID %d, not %d", back.workerID, leaf.workerID)
	}
	var backIDs []int64
	for range 500 {
		id, err := back.get()
		if err != nil {
			t.Fatal(err)
		}
		backIDs = append(backIDs, id)
	}
	if minOf(backIDs) <= last {
		t.Fatalf("the Leaf server started after flurry issued %d, not above flurry's last ID %d", minOf(backIDs), last)
	}
	checkUnique(t, map[string][]int64{"the Leaf server": leafIDs, "flurry": flurryIDs, "the Leaf server after flurry": backIDs})
}

// waitFor polls ok for up to a minute.
func waitFor(t testing.TB, what string, ok func() bool) {
	t.Helper()
	deadline := time.Now().Add(time.Minute)
	for !ok() {
		if time.Now().After(deadline) {
			t.Fatalf("gave up waiting for %s", what)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// TestLiveLeafNeverTaken: while a Leaf server runs (writing its node every 3 s),
// flurry takes its worker ID neither to replace it from elsewhere (replace=) nor
// at its own address (addr=, a server still running there): every attempt is
// refused with lease.ErrNoFreeValue, for longer than fresh= and two of Leaf's
// writes. Once the server stops, flurry takes the worker ID.
func TestLiveLeafNeverTaken(t *testing.T) {
	t.Parallel()
	servers := zkServers(t)
	name := leafName(t)
	const addr = "10.2.0.5:8080"
	leaf := newLeaf(t, servers, name, addr, nil)
	if err := leaf.init(context.Background()); err != nil {
		t.Fatal(err)
	}
	// The default fresh= (10 s), not the least one (5 s): with the least, a write
	// of Leaf's that takes more than 2 s (a starved ZooKeeper or writer on a loaded
	// machine) leaves the node alone for fresh= and flurry takes it, as the rule
	// says it must. What this test checks is that a server writing on its schedule
	// is never taken, and the default leaves each write 7 s to land.
	replace := openStore(t, servers, name, func(o *Options) { o.Replace, o.Fresh = addr, DefaultFresh })
	same := openStore(t, servers, name, func(o *Options) { o.Addr, o.Fresh = addr, DefaultFresh })
	ctx := conformance.Context(t, time.Minute)
	for end := time.Now().Add(DefaultFresh + 2*leafInterval); time.Now().Before(end); time.Sleep(250 * time.Millisecond) {
		for what, st := range map[string]*Store{"replace=": replace, "addr=": same} {
			l, err := st.Acquire(ctx, "default", 1024, "flurry", time.Minute)
			if !errors.Is(err, lease.ErrNoFreeValue) {
				t.Fatalf("%s%s took worker %d of the running Leaf server (err %v)", what, addr, l.Value, err)
			}
		}
	}
	recs, err := same.List(ctx, "default")
	if err != nil || len(recs) != 1 || !recs[0].Held || recs[0].Owner != "Leaf server "+addr || recs[0].Value != leaf.workerID {
		t.Fatalf("List = %+v, %v; want worker %d held by the Leaf server", recs, err, leaf.workerID)
	}

	leaf.halt()
	g, s, err := startFlurry(t, replace, t.TempDir(), time.Minute)
	if err != nil {
		t.Fatalf("the Leaf server stopped, but flurry did not take its worker ID: %v", err)
	}
	if s.Status().Value != leaf.workerID {
		t.Fatalf("flurry took worker %d; want %d", s.Status().Value, leaf.workerID)
	}
	issue(t, g, s, 10)
	if _, err := same.Acquire(ctx, "default", 1024, "second flurry", time.Minute); !errors.Is(err, lease.ErrNoFreeValue) {
		t.Fatalf("a second flurry server took the worker ID the first holds: %v", err)
	}
}

// TestLeafStartedOnHeldNode: a Leaf server started at the address of a node
// flurry holds (a rollback while flurry still runs) takes the node, as Leaf does;
// flurry's next renewal finds the node written by another and stops its
// generator, and flurry takes the worker ID back only after that server stopped.
func TestLeafStartedOnHeldNode(t *testing.T) {
	t.Parallel()
	servers := zkServers(t)
	name := leafName(t)
	const addr = "10.3.0.5:8080"
	st := openStore(t, servers, name, func(o *Options) { o.Addr = addr })
	g, s, err := startFlurry(t, st, t.TempDir(), 30*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	before := issue(t, g, s, 10)

	// flurry registered the node as Leaf would, and writes it: a Leaf server
	// starting there now passes its check.
	waitFor(t, "flurry's first write of the node", func() bool {
		_, stat := nodeTimestamp(t, st.conn, st.forever, addr)
		return stat.Version > 0
	})
	leaf := newLeaf(t, servers, name, addr, nil)
	if err := leaf.init(context.Background()); err != nil {
		t.Fatalf("a Leaf server at %s: %v", addr, err)
	}
	if leaf.workerID != s.Status().Value {
		t.Fatalf("Leaf took worker %d, flurry holds %d", leaf.workerID, s.Status().Value)
	}
	// Leaf writes its node 1 s after it started; flurry renews every 2 s.
	waitFor(t, "flurry to stop issuing once Leaf wrote the node", func() bool {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Millisecond)
		defer cancel()
		_, err := g.Next(ctx)
		return errors.Is(err, lease.ErrLost)
	})
	if s.Status().Losses == 0 {
		t.Fatalf("status %+v: no loss counted", s.Status())
	}
	// flurry gave the worker ID up at once, rather than hold it to its TTL.
	recs, err := st.List(conformance.Context(t, 10*time.Second), "default")
	if err != nil || len(recs) != 1 || !recs[0].Held || recs[0].Owner != "Leaf server "+addr {
		t.Fatalf("List = %+v, %v; want the worker held by the Leaf server", recs, err)
	}
	// While the Leaf server runs, flurry stays stopped.
	for end := time.Now().Add(minFresh + leafInterval); time.Now().Before(end); time.Sleep(200 * time.Millisecond) {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Millisecond)
		id, err := g.Next(ctx)
		cancel()
		if err == nil {
			t.Fatalf("flurry issued %d beside the running Leaf server", id)
		}
	}
	leaf.halt()
	waitFor(t, "flurry to issue again after the Leaf server stopped", func() bool {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Millisecond)
		defer cancel()
		_, err := g.Next(ctx)
		return err == nil
	})
	after := issue(t, g, s, 10)
	if minOf(after) <= maxOf(before) {
		t.Fatalf("flurry's IDs after the Leaf server went back: %d after %d", minOf(after), maxOf(before))
	}
}

// TestMixedLeafAndFlurry: Leaf servers and flurry servers registered in one
// registry, in turns, draw distinct worker IDs from one sequence and issue at once
// without a duplicate; a Leaf server registered after the flurry servers reads
// their nodes as its own kind.
func TestMixedLeafAndFlurry(t *testing.T) {
	t.Parallel()
	servers := zkServers(t)
	name := leafName(t)
	l1 := newLeaf(t, servers, name, "10.4.0.1:8080", nil)
	if err := l1.init(context.Background()); err != nil {
		t.Fatal(err)
	}
	var gens []*snowflake.Generator
	var sessions []*lease.Session
	for _, addr := range []string{"10.4.0.2:8080", "10.4.0.2:8081"} {
		st := openStore(t, servers, name, func(o *Options) { o.Addr = addr })
		g, s, err := startFlurry(t, st, t.TempDir(), 30*time.Second)
		if err != nil {
			t.Fatal(err)
		}
		gens, sessions = append(gens, g), append(sessions, s)
	}
	l2 := newLeaf(t, servers, name, "10.4.0.3:8080", nil)
	if err := l2.init(context.Background()); err != nil {
		t.Fatalf("a Leaf server registering after flurry servers: %v", err)
	}
	sets := map[string][]int64{}
	workers := map[int64]string{}
	for round := range 50 {
		for i, l := range []*leafServer{l1, l2} {
			for range 20 {
				id, err := l.get()
				if err != nil {
					t.Fatal(err)
				}
				who := fmt.Sprintf("Leaf server %d", i+1)
				sets[who] = append(sets[who], id)
			}
		}
		for i, g := range gens {
			who := fmt.Sprintf("flurry server %d", i+1)
			sets[who] = append(sets[who], issue(t, g, sessions[i], 20)...)
		}
		if round%10 == 0 {
			time.Sleep(time.Millisecond)
		}
	}
	for who, ids := range sets {
		w := workerOf(ids[0])
		for _, id := range ids {
			if workerOf(id) != w {
				t.Fatalf("%s issued IDs of workers %d and %d", who, w, workerOf(id))
			}
		}
		if prev, dup := workers[w]; dup {
			t.Fatalf("%s and %s share worker ID %d", prev, who, w)
		}
		workers[w] = who
	}
	if len(workers) != 4 || workers[0] != "Leaf server 1" || workers[3] != "Leaf server 2" {
		t.Fatalf("workers %v; want 0 to 3 in the order the servers registered", workers)
	}
	checkUnique(t, sets)
}

// TestRegistryFull: a registry that has given out worker IDs 0 to 1023 has none
// for a new server: flurry refuses with ErrBadConfig and says what to do, rather
// than take number 1024, whose low 10 bits are worker 0's.
func TestRegistryFull(t *testing.T) {
	t.Parallel()
	servers := zkServers(t)
	name := leafName(t)
	st := openStore(t, servers, name, func(o *Options) { o.Addr = "10.5.0.1:8080" })
	ctx := conformance.Context(t, time.Minute)
	if err := st.conn.CreatePath(ctx, st.forever); err != nil {
		t.Fatal(err)
	}
	// 1024 servers registered, long ago: ZooKeeper's counter is at 1024.
	data := endpoint{IP: "10.5.1.1", Port: "8080", Timestamp: 1}.marshal()
	for batch := 0; batch < 1024; batch += 128 {
		var ops []any
		for i := range 128 {
			ops = append(ops, &zk.CreateRequest{Path: fmt.Sprintf("%s/10.5.%d.%d:8080-", st.forever, (batch+i)/256+2, (batch+i)%256), Data: data, Acl: zk.WorldACL(zk.PermAll), Flags: zk.FlagSequence})
		}
		if _, err := st.conn.Multi(ctx, ops...); err != nil {
			t.Fatal(err)
		}
	}
	_, err := st.Acquire(ctx, "default", 1024, "flurry", time.Minute)
	if !errors.Is(err, lease.ErrBadConfig) || !strings.Contains(err.Error(), "worker ID 1024") || !strings.Contains(err.Error(), "replace=") {
		t.Fatalf("Acquire on a full registry: %v; want ErrBadConfig naming worker ID 1024 and replace=", err)
	}
	// The node of a server gone for good can be taken over, once it has been
	// left alone for fresh=.
	ro := openStore(t, servers, name, func(o *Options) { o.Replace = "10.5.2.7:8080" })
	var l lease.Lease
	waitFor(t, "the registered nodes to be left alone", func() bool {
		l, err = ro.Acquire(ctx, "default", 1024, "flurry", time.Minute)
		return !errors.Is(err, lease.ErrNoFreeValue)
	})
	if err != nil || l.Value != 7 {
		t.Fatalf("replace= of a stopped server's node: %+v, %v; want worker 7", l, err)
	}
}

// TestZooKeeperDownAtStart: with ZooKeeper unreachable a server does not start,
// not even on a journal that holds its worker ID and mark (Leaf would start on
// its workerID.properties): Open fails with an error that names ZooKeeper, and a
// start whose store stopped answering waits, issuing nothing, and goes ahead by
// itself once ZooKeeper answers, above the IDs issued before.
func TestZooKeeperDownAtStart(t *testing.T) {
	t.Parallel()
	servers := zkServers(t)
	name := leafName(t)
	const addr = "10.6.0.5:8080"
	p := testenv.StartProxy(t, servers[0])
	via := []string{p.Addr()}
	dir := t.TempDir()
	var before []int64
	t.Run("before", func(t *testing.T) {
		st := openStore(t, via, name, func(o *Options) { o.Addr = addr })
		g, s, err := startFlurry(t, st, dir, 30*time.Second)
		if err != nil {
			t.Fatal(err)
		}
		before = issue(t, g, s, 100)
		if err := s.Close(); err != nil {
			t.Fatal(err)
		}
	})
	if t.Failed() {
		return
	}

	p.Refuse()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	_, err := Open(ctx, Options{ZK: zkconn.Options{Servers: via, DialTimeout: time.Second}, Name: name, Addr: addr})
	if err == nil || !strings.Contains(err.Error(), "cannot reach ZooKeeper at "+p.Addr()) {
		t.Fatalf("Open with ZooKeeper down: %v; want an error that says ZooKeeper cannot be reached there", err)
	}

	p.Restore()
	// Calls give up after a second, so that the start meets several failures
	// while ZooKeeper is down.
	st := openStore(t, via, name, func(o *Options) { o.Addr, o.ZK.RequestTimeout = addr, time.Second })
	p.Refuse()
	type started struct {
		g   *snowflake.Generator
		s   *lease.Session
		err error
	}
	done := make(chan started, 1)
	go func() {
		g, s, err := startFlurry(t, st, dir, 2*time.Minute)
		done <- started{g, s, err}
	}()
	select {
	case r := <-done:
		t.Fatalf("the start ended while ZooKeeper was down (generator %v): %v; it must wait for ZooKeeper", r.g != nil, r.err)
	case <-time.After(4 * time.Second):
	}
	p.Restore()
	r := <-done
	if r.err != nil {
		t.Fatalf("ZooKeeper answers again, but the start failed: %v", r.err)
	}
	after := issue(t, r.g, r.s, 100)
	if minOf(after) <= maxOf(before) {
		t.Fatalf("after ZooKeeper came back flurry issued %d, below its earlier %d", minOf(after), maxOf(before))
	}
	checkUnique(t, map[string][]int64{"before": before, "after": after})
}

// TestSinceAcrossLeaders: a node's last write is judged by the clock of the
// ZooKeeper leader that committed it; one written under an earlier leader (whose
// clock may differ from the current one's) counts as written at the first reading
// kept of the current leader, which comes after it: a Leaf node stays fresh, and a
// lease held, at least as long as by either clock.
func TestSinceAcrossLeaders(t *testing.T) {
	t.Parallel()
	servers := zkServers(t)
	st := openStore(t, servers, leafName(t), func(o *Options) {})
	ctx := conformance.Context(t, 30*time.Second)
	if _, err := st.zkNow(ctx); err != nil {
		t.Fatal(err)
	}
	node := func(epoch, mtime int64) *zk.Stat { return &zk.Stat{Mzxid: epoch<<32 | 9, Mtime: mtime} }
	for _, tc := range []struct {
		what  string
		c     *zkClock
		stat  *zk.Stat
		since int64
	}{
		{"this leader's write", &zkClock{now: 5000, epoch: 7}, node(7, 4000), 4000},
		{"an earlier leader's write: the first reading of this one", &zkClock{now: 5000, epoch: 7}, node(6, 90000), 5000},
		{"a later reading of the same leader keeps the first", &zkClock{now: 8000, epoch: 7}, node(6, 90000), 5000},
		{"a new leader: its own first reading", &zkClock{now: 9000, epoch: 8}, node(7, 1), 9000},
		{"a write of a later leader than the reading's", &zkClock{now: 9500, epoch: 8}, node(9, 1), 9500},
	} {
		got, err := st.since(ctx, tc.c, tc.stat)
		if err != nil || got != tc.since {
			t.Errorf("%s: since = %d, %v; want %d", tc.what, got, err, tc.since)
		}
	}
}
