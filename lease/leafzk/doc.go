// Package leafzk keeps node-value leases in Meituan Leaf's own ZooKeeper
// registry, so that flurry servers replace Leaf's snowflake servers in place and
// run beside them in one worker space.
//
//	o, err := leafzk.ParseURL("leafzk://zk1:2181,zk2:2181/com.example.leaf?addr=10.0.0.5:8080")
//	st, err := leafzk.Open(ctx, o)
//	g, s, err := lease.NewGenerator(ctx, snowflake.Options{Layout: leafLayout, Start: snowflake.StartRandom},
//		lease.Options{Store: st, Journal: journal})
//
// # Leaf's registry
//
// A Leaf server registers under /snowflake/{leaf.name}/forever a persistent
// sequential node named {ip}:{port}-NNNNNNNNNN, the first time it starts at that
// address; the number is its worker ID (10 bits: 0 to 1023), and the node is never
// deleted. Its data is {"ip":...,"port":...,"timestamp":...}, the server's clock
// when it wrote it, rewritten every 3 s. A restarting server finds its node by
// ip:port, and refuses to start when the node's timestamp is ahead of its clock.
//
// The store reads and writes that registry as a Leaf server does, and keeps what
// Leaf has no place for (who holds a worker ID, until when, its high-water mark)
// in nodes of its own, /snowflake/{leaf.name}/flurry/{worker ID}, where Leaf does
// not look. Every node it writes under forever is exactly Leaf's: a Leaf server
// fails to start on a node whose data has a field it does not know.
//
// # Which worker ID
//
// Acquire takes the node of the address the URL gives: addr=ip:port, the address
// the server is known by (give a Leaf server's address to take its place), or
// replace=ip:port, the node of another server to take over. With addr= and no
// node of that address, it registers one as Leaf would, and takes its number; a
// number of 1024 or more is refused with what to do (Leaf's worker field cannot
// hold it; a Leaf server fails on it too). AcquireValue (lease.Options.Fixed)
// takes the node of one worker ID. New flurry servers and Leaf servers thus draw
// their worker IDs from one sequence, and never share one.
//
// # Never beside a running Leaf server
//
// A Leaf server writes its node every 3 s and never looks at flurry's records, so
// flurry must keep away from the nodes of running ones. The store takes a node
// only when it has been left alone for Fresh (10 s by default), by ZooKeeper's
// clock (the node's mtime against the time of a write
// of flurry's), so that no host's clock counts; a node written under an earlier
// ZooKeeper leader counts as written at the current leader's first reading, so
// that leaders' clocks are never compared. This holds for the node of
// flurry's own address too: a Leaf server still running there (stopped late, or
// on another host that reports the same address) is waited for; and for a node
// that flurry wrote last, since a Leaf server may have started on it without
// writing it (below). Only a node of the address the server listens on
// (SetListening; flurry serve gives its listener's), where no Leaf server can be
// serving, is taken back at once when flurry wrote it last.
//
// A running Leaf server does not always write its node: one started while
// ZooKeeper was unreachable, or whose start check failed (START FAILED, use local
// node file properties), runs on the worker ID of its workerID.properties file
// and never writes; one whose clock stepped back skips its writes until the clock
// is past its last write. So before it takes a node, and at every renewal while
// it holds one, the store asks the node's address (its IP, at ProbePort or the
// registered port): GET /v1/info, then GET /api/snowflake/get/{key}. A flurry
// server answers with ServerHeader; any other answer, or a connection accepted
// and not answered within ProbeTimeout, is a Leaf server's: the store refuses the
// worker ID with lease.ErrNoFreeValue, and a holder's renewal fails with
// lease.ErrLost. Only a refused connect, no route, or no answer to the connect
// within ProbeTimeout means nobody is there. Not seen: a Leaf server serving on
// another port than the one probed, one behind a firewall that drops the probe's
// connects, and one whose workerID.properties names the worker ID of another
// address's node (a registry recreated, a file copied between hosts).
// NoProbe (probe=off) turns the probe off, and doubles such servers. Every write of
// flurry's to a Leaf node checks its version in the same transaction as its lease:
// if a Leaf server wrote the node since (one was started at that address while
// flurry held it), the write fails, the renewal reports lease.ErrLost, the
// generator stops within a renewal, and the store waits again for that server to
// stop before it takes the worker ID back.
//
// # Starting above a Leaf server's IDs
//
// A new holder starts above the worker ID's mark (package lease). When the node's
// last write was a Leaf server's, with timestamp T, the mark is at least T + Margin
// (10 s by default). Why that covers every ID the server issued: Leaf reads its
// clock into the data, writes it, and schedules the next write 3 s after this one
// ends (scheduleWithFixedDelay), so while its writes succeed, consecutive
// timestamps are at most 3 s + the write's duration + any pause of the JVM apart,
// plus any step forward of the server's clock in between. Its last ID was issued
// at its clock before it stopped, and it stopped before its next write landed: so
// at most T + 3 s + (two writes' durations, pauses, a forward clock step) in its
// clock's milliseconds, which are the IDs' milliseconds. The IDs' time field is
// the Leaf server's clock, so this holds whatever flurry's clock reads: a skew
// between the hosts does not enter it. 10 s leaves 7 s for the writes, pauses and
// steps; set margin= higher if they can be longer. flurry's clock decides only
// when it may issue: while it is behind the mark, the generator issues above it
// within its maximum drift (flurry serve's behind: logical) or waits (behind:
// fail). Not covered: a Leaf server
// that lost ZooKeeper before it stopped goes on issuing without writing its node
// (Leaf logs the failed write and carries on), so its IDs run past T by the length
// of that outage: stop Leaf servers while they reach ZooKeeper, or set margin=
// above the outage. With Fresh ≥ Margin (the defaults), the mark is usually behind
// the clock by the time flurry takes the node, so it issues at its clock at once.
//
// When flurry wrote the node last, its own marks cover every ID it issued, and the
// node's timestamp counts without the margin.
//
// # Keeping the node current
//
// Every renewal (every Window, 2 s by default, so at least as often as Leaf's
// 3 s) writes the node's timestamp, with the node's own ip and port, as its Leaf
// server would: the holder's clock, never lower than a timestamp written before.
// Release writes it once more, to the mark it releases with plus one millisecond
// (what the generator issued through): a Leaf server started at that address
// later finds a timestamp behind its clock, passes its start check, and issues at
// its clock, above every ID flurry issued. After a crash the last timestamp can be
// up to a renewal behind flurry's last ID, as a Leaf server's own can be 3 s
// behind: start flurry again and stop it (it resumes the lease from its journal
// and releases it), or wait out the renewal interval plus the clock skew before
// Leaf starts. Leaf's start check only logs a failure and starts anyway when its
// workerID.properties file exists (the check's exception is caught by its
// fall-back to that file), so check the node's timestamp against the clock before
// starting Leaf on a host whose clock is behind flurry's.
//
// # ZooKeeper down at start
//
// Leaf then starts on the worker ID in its workerID.properties file: it cannot know
// whether another server took that worker ID since, or whether its clock is behind
// the IDs it issued before, and duplicates follow when either is so. flurry does
// not guess, not even on a journal that holds the worker ID and its mark (the
// lease may have expired while flurry was down, and another flurry server, or a
// Leaf server started at the address, hold the worker ID now): Open
// fails when no member of the ensemble answers within the dial timeout (flurry
// serve exits with "cannot reach ZooKeeper at ...", for a supervisor to restart
// it), and a session whose store stops answering before it holds a lease retries
// while its context lasts (flurry serve's start: a minute), issuing nothing. It
// starts once ZooKeeper answers, resuming from its journal. A running server rides
// out an outage on its outage budget (lease.Options.Budget), as with every store.
package leafzk
