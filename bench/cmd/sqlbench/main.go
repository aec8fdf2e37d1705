// Command sqlbench measures flurry_next_id(), the function flurry sql installs,
// beside the database's own counter in the same run: PostgreSQL's nextval() on a
// sequence and a bigserial column, MariaDB's NEXTVAL on a SEQUENCE and an
// AUTO_INCREMENT column. On PostgreSQL it also measures the well-known design it
// does not use (the last tick and sequence in a row updated under its row lock)
// and the UUID keys that need no coordination: gen_random_uuid(), and uuidv7()
// on servers that have it (PostgreSQL 18).
//
//	go run ./cmd/sqlbench                       # both engines, 1, 8 and 64 sessions
//	go run ./cmd/sqlbench -engines postgres -d 3s -rounds 5
//
// It makes a database of its own on each server (flurry_sqlbench_<random>, dropped
// at the end), installs the function with the instagram layout and an in-memory
// lease, and prints Markdown tables (docs/benchmarks.md, "IDs made in the
// database"):
//
//   - IDs/s: N sessions each run, for -d, statements that take -batch IDs at once
//     inside the database (SELECT count(f()) FROM generate_series(1, batch)), so
//     that the figure is the database's cost, not the round trips' (the row-lock
//     design a tenth of that: it writes a row version per ID);
//   - wait events (PostgreSQL): while flurry and nextval() take IDs, what their
//     sessions wait for, sampled from pg_stat_activity every 10 ms, so that a
//     reader can tell what bounds a figure (a lock, the sequence's page, the WAL);
//   - single-row INSERT: N sessions each insert one row per statement
//     into a table whose id comes from the function, or from the peer, for -d,
//     committing every 100 rows (a commit per row would measure the disk's
//     fsync, the same for both); the added cost per insert is the difference of
//     the mean latencies with one session.
//
// Each cell is the median of -rounds rounds, flurry and its peers interleaved.
// The servers come from FLURRY_TEST_POSTGRES and FLURRY_TEST_MYSQL (defaults on
// loopback, as the tests use).
package main

import (
	"context"
	"crypto/rand"
	"database/sql"
	"encoding/hex"
	"flag"
	"fmt"
	"net/url"
	"os"
	"runtime"
	"sort"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/flurryid/flurry/clock"
	"github.com/flurryid/flurry/indb"
	"github.com/flurryid/flurry/layout"
	"github.com/flurryid/flurry/lease/memstore"
)

type variant struct {
	name   string
	ids    string // one statement that takes a batch of IDs: %d is the batch
	insert string // one single-row INSERT
	// small takes a tenth of the batch per statement: the row-lock design writes
	// a new version of its row per ID, and a statement of 1,000 of them with 64
	// sessions queued behind it ran for seconds each.
	small bool
}

func main() {
	enginesFlag := flag.String("engines", "postgres,mariadb", "engines to measure")
	dur := flag.Duration("d", 2*time.Second, "length of one measurement")
	rounds := flag.Int("rounds", 3, "rounds per cell; the tables give the median")
	batch := flag.Int("batch", 1000, "IDs per statement in the IDs/s measurement")
	sessionsFlag := flag.String("sessions", "1,8,64", "numbers of concurrent sessions")
	ariaSoft := flag.Bool("aria-soft", false, "MariaDB: measure with SET GLOBAL aria_group_commit = 'soft' (1 ms interval), restored at the end; see docs/in-database.md")
	flag.Parse()
	var sessions []int
	for _, s := range strings.Split(*sessionsFlag, ",") {
		n, err := strconv.Atoi(s)
		if err != nil || n < 1 {
			fail(fmt.Errorf("-sessions %q: give numbers such as 1,8,64", *sessionsFlag))
		}
		sessions = append(sessions, n)
	}
	ctx := context.Background()
	host, _ := os.Hostname()
	fmt.Printf("sqlbench: %s, %d CPUs, %s, %s; -d %v -rounds %d -batch %d; %s\n\n", host, runtime.NumCPU(), runtime.Version(), time.Now().UTC().Format(time.RFC3339), *dur, *rounds, *batch, load())
	for _, name := range strings.Split(*enginesFlag, ",") {
		e, err := indb.ParseEngine(name)
		if err != nil {
			fail(err)
		}
		if err := bench(ctx, e, sessions, *dur, *rounds, *batch, *ariaSoft); err != nil {
			fail(err)
		}
	}
	fmt.Printf("sqlbench: done, %s\n", load())
}

// load reports the load average and the CPU time the host took (steal) since boot,
// so that a reader can tell a busy machine's figures.
func load() string {
	avg, _ := os.ReadFile("/proc/loadavg")
	stat, _ := os.ReadFile("/proc/stat")
	steal := ""
	if f := strings.Fields(strings.SplitN(string(stat), "\n", 2)[0]); len(f) > 8 {
		var total, st float64
		for _, v := range f[1:] {
			x, _ := strconv.ParseFloat(v, 64)
			total += x
		}
		st, _ = strconv.ParseFloat(f[8], 64)
		if total > 0 {
			steal = fmt.Sprintf(", steal %.1f%% since boot", 100*st/total)
		}
	}
	return "load average " + strings.Join(strings.Fields(string(avg))[:min(3, len(strings.Fields(string(avg))))], " ") + steal
}

func fail(err error) {
	fmt.Fprintln(os.Stderr, "sqlbench:", err)
	os.Exit(1)
}

func serverURL(e indb.Engine) string {
	env, def := "FLURRY_TEST_POSTGRES", "postgres://postgres@127.0.0.1:5432/test?sslmode=disable"
	if e == indb.MariaDB {
		env, def = "FLURRY_TEST_MYSQL", "mysql://root@127.0.0.1:3306/test"
	}
	if v := os.Getenv(env); v != "" {
		return v
	}
	return def
}

func bench(ctx context.Context, e indb.Engine, sessions []int, dur time.Duration, rounds, batch int, ariaSoft bool) error {
	base := serverURL(e)
	admin, _, where, err := indb.Open(ctx, base)
	if err != nil {
		return err
	}
	defer admin.Close()
	if e == indb.MariaDB && ariaSoft {
		var mode, interval string
		if err := admin.QueryRowContext(ctx, "SELECT @@global.aria_group_commit, @@global.aria_group_commit_interval").Scan(&mode, &interval); err != nil {
			return err
		}
		if _, err := admin.ExecContext(ctx, "SET GLOBAL aria_group_commit_interval = 1000"); err != nil {
			return err
		}
		if _, err := admin.ExecContext(ctx, "SET GLOBAL aria_group_commit = 'soft'"); err != nil {
			return err
		}
		defer admin.ExecContext(context.Background(), "SET GLOBAL aria_group_commit = '"+mode+"'")
		defer admin.ExecContext(context.Background(), "SET GLOBAL aria_group_commit_interval = "+interval)
		where += ", aria_group_commit soft, 1 ms"
	}
	var version string
	admin.QueryRowContext(ctx, "SELECT version()").Scan(&version)
	var b [4]byte
	rand.Read(b[:])
	name := "flurry_sqlbench_" + hex.EncodeToString(b[:])
	if _, err := admin.ExecContext(ctx, "CREATE DATABASE "+name); err != nil {
		return err
	}
	defer func() {
		drop := "DROP DATABASE IF EXISTS " + name
		if e == indb.Postgres {
			drop += " WITH (FORCE)"
		}
		if _, err := admin.ExecContext(context.Background(), drop); err != nil {
			fmt.Fprintln(os.Stderr, "sqlbench:", drop+":", err)
		}
	}()
	u, _ := url.Parse(base)
	u.Path = "/" + name
	db, _, _, err := indb.Open(ctx, u.String())
	if err != nil {
		return err
	}
	defer db.Close()
	db.SetMaxOpenConns(70)
	db.SetMaxIdleConns(70)
	l, _ := layout.Lookup("instagram")
	variants, note, err := setup(ctx, db, e, l)
	if err != nil {
		return err
	}
	fmt.Printf("### %s (%s, %s)\n\n%s", e, strings.SplitN(version, ",", 2)[0], where, note)

	// IDs/s inside the database.
	fmt.Printf("IDs/s, %d IDs per statement (the row lock: %d) (median of %d rounds of %v)\n\n", batch, max(batch/10, 1), rounds, dur)
	fmt.Printf("| sessions |")
	for _, v := range variants {
		fmt.Printf(" %s |", v.name)
	}
	fmt.Printf(" flurry / %s |\n|---|", variants[1].name)
	for range variants {
		fmt.Printf("---|")
	}
	fmt.Println("---|")
	// The wait events of flurry's and its peer's sessions, PostgreSQL only.
	waits := map[int][2]map[string]int{}
	for _, n := range sessions {
		waits[n] = [2]map[string]int{{}, {}}
		rates := make([][]float64, len(variants))
		for r := 0; r < rounds; r++ {
			for i := range variants {
				v := variants[(i+r)%len(variants)]
				k := (i + r) % len(variants)
				q := fmt.Sprintf(v.ids, batch)
				if v.small {
					q = fmt.Sprintf(v.ids, max(batch/10, 1))
				}
				var stop func() map[string]int
				if e == indb.Postgres && k < 2 {
					stop = sampleWaits(ctx, admin, name)
				}
				rate, err := measure(ctx, db, n, dur, func(c *sql.Conn) (int, error) {
					if strings.HasPrefix(q, "INSERT") {
						res, err := c.ExecContext(ctx, q)
						if err != nil {
							return 0, err
						}
						got, err := res.RowsAffected()
						return int(got), err
					}
					var got int
					err := c.QueryRowContext(ctx, q).Scan(&got)
					return got, err
				})
				if stop != nil {
					for w, c := range stop() {
						waits[n][k][w] += c
					}
				}
				if err != nil {
					return fmt.Errorf("%s, %d sessions: %w", v.name, n, err)
				}
				rates[k] = append(rates[k], rate)
			}
		}
		fmt.Printf("| %d |", n)
		for i := range variants {
			fmt.Printf(" %s |", human(median(rates[i])))
		}
		fmt.Printf(" %.2f |\n", median(rates[0])/median(rates[1]))
	}

	if e == indb.Postgres {
		fmt.Printf("\nwait events of the sessions while they took IDs (pg_stat_activity sampled every 10 ms; share of the samples of active sessions)\n\n")
		fmt.Printf("| sessions | %s | %s |\n|---|---|---|\n", variants[0].name, variants[1].name)
		for _, n := range sessions {
			fmt.Printf("| %d | %s | %s |\n", n, topWaits(waits[n][0]), topWaits(waits[n][1]))
		}
	}

	// Single-row INSERTs.
	fmt.Printf("\nsingle-row INSERT statements, committed every 100 rows: rows/s (median of %d rounds of %v)\n\n", rounds, dur)
	var ins []variant
	for _, v := range variants {
		if v.insert != "" {
			ins = append(ins, v)
		}
	}
	fmt.Printf("| sessions |")
	for _, v := range ins {
		fmt.Printf(" %s |", strings.TrimSuffix(v.name, ", INSERT…SELECT"))
	}
	fmt.Println(" added per insert, 1 session |")
	fmt.Printf("|---|")
	for range ins {
		fmt.Printf("---|")
	}
	fmt.Println("---|")
	// MariaDB: the Aria log syncs per row, with one session (a sync per statement
	// is the disk's cost, whatever the load of the machine).
	syncs := make([]float64, len(ins))
	for _, n := range sessions {
		rates := make([][]float64, len(ins))
		for r := 0; r < rounds; r++ {
			for i := range ins {
				k := (i + r) % len(ins)
				v := ins[k]
				before := ariaSyncs(ctx, db, e)
				var seq atomic.Int64
				// A commit per row would measure the disk's fsync, the same for both;
				// 100 rows a transaction leave the statement's own cost.
				open := map[*sql.Conn]int{}
				var mu sync.Mutex
				rate, err := measure(ctx, db, n, dur, func(c *sql.Conn) (int, error) {
					mu.Lock()
					k := open[c]
					open[c] = k + 1
					mu.Unlock()
					if k%100 == 0 {
						if k > 0 {
							if _, err := c.ExecContext(ctx, "COMMIT"); err != nil {
								return 0, err
							}
						}
						if _, err := c.ExecContext(ctx, "BEGIN"); err != nil {
							return 0, err
						}
					}
					_, err := c.ExecContext(ctx, v.insert, seq.Add(1))
					return 1, err
				})
				if err != nil {
					return fmt.Errorf("%s insert, %d sessions: %w", v.name, n, err)
				}
				rates[k] = append(rates[k], rate)
				if n == 1 && r == 0 && rate > 0 {
					syncs[k] = float64(ariaSyncs(ctx, db, e)-before) / (rate * dur.Seconds())
				}
			}
		}
		fmt.Printf("| %d |", n)
		for i := range ins {
			fmt.Printf(" %s |", human(median(rates[i])))
		}
		if n == 1 {
			added := (1/median(rates[0]) - 1/median(rates[1])) * 1e6
			fmt.Printf(" %+.1f µs (%s mean %.1f µs, %s %.1f µs) |\n", added, strings.TrimSuffix(ins[0].name, ", INSERT…SELECT"), 1e6/median(rates[0]), strings.TrimSuffix(ins[1].name, ", INSERT…SELECT"), 1e6/median(rates[1]))
		} else {
			fmt.Println(" |")
		}
	}
	if e == indb.MariaDB {
		fmt.Printf("\nAria log syncs per single-row INSERT, 1 session:")
		for i, v := range ins {
			fmt.Printf(" %s %.3f;", strings.TrimSuffix(v.name, ", INSERT…SELECT"), syncs[i])
		}
		fmt.Println()
		if err := serverWork(ctx, db, ins); err != nil {
			return err
		}
	}
	fmt.Println()
	return nil
}

// serverWork prints what the server does per single-row INSERT of each variant,
// from one connection's SHOW SESSION STATUS before and after 1,000 inserts in
// transactions of 100: counts of handler calls, table opens and table locks,
// which do not depend on the machine's load as times do.
func serverWork(ctx context.Context, db *sql.DB, ins []variant) error {
	const n = 1000
	fmt.Printf("\nserver work per single-row INSERT, 1 session, %d inserts (SHOW SESSION STATUS deltas)\n\n| counter |", n)
	for _, v := range ins {
		fmt.Printf(" %s |", strings.TrimSuffix(v.name, ", INSERT…SELECT"))
	}
	fmt.Printf("\n|---|")
	for range ins {
		fmt.Printf("---|")
	}
	fmt.Println()
	var names []string
	deltas := make([]map[string]int64, len(ins))
	for i, v := range ins {
		c, err := db.Conn(ctx)
		if err != nil {
			return err
		}
		status := func() (map[string]int64, error) {
			rows, err := c.QueryContext(ctx, "SHOW SESSION STATUS WHERE Variable_name LIKE 'Handler%' OR Variable_name IN ('Com_stmt_execute', 'Opened_tables', 'Table_locks_immediate', 'Table_locks_waited')")
			if err != nil {
				return nil, err
			}
			defer rows.Close()
			m := map[string]int64{}
			for rows.Next() {
				var k, val string
				if err := rows.Scan(&k, &val); err != nil {
					return nil, err
				}
				m[k], _ = strconv.ParseInt(val, 10, 64)
			}
			return m, rows.Err()
		}
		before, err := status()
		if err != nil {
			c.Close()
			return err
		}
		for k := 0; k < n; k++ {
			if k%100 == 0 {
				if k > 0 {
					c.ExecContext(ctx, "COMMIT")
				}
				c.ExecContext(ctx, "BEGIN")
			}
			if _, err := c.ExecContext(ctx, v.insert, 1_000_000+k); err != nil {
				c.Close()
				return fmt.Errorf("%s: %w", v.name, err)
			}
		}
		c.ExecContext(ctx, "COMMIT")
		after, err := status()
		c.Close()
		if err != nil {
			return err
		}
		deltas[i] = map[string]int64{}
		for k, a := range after {
			deltas[i][k] = a - before[k]
			if i == 0 {
				names = append(names, k)
			}
		}
	}
	sort.Strings(names)
	for _, k := range names {
		zero := true
		for i := range ins {
			zero = zero && deltas[i][k] == 0
		}
		if zero {
			continue
		}
		fmt.Printf("| %s |", k)
		for i := range ins {
			fmt.Printf(" %.2f |", float64(deltas[i][k])/n)
		}
		fmt.Println()
	}
	return nil
}

// sampleWaits samples, every 10 ms until the returned function is called, what
// the active client sessions of database name wait for ("CPU" when they wait for
// nothing), and returns the counts.
func sampleWaits(ctx context.Context, admin *sql.DB, name string) func() map[string]int {
	counts := map[string]int{}
	done := make(chan struct{})
	finished := make(chan struct{})
	go func() {
		defer close(finished)
		t := time.NewTicker(10 * time.Millisecond)
		defer t.Stop()
		for {
			select {
			case <-done:
				return
			case <-t.C:
			}
			rows, err := admin.QueryContext(ctx, `SELECT coalesce(wait_event_type || ':' || wait_event, 'CPU') FROM pg_stat_activity
WHERE datname = $1 AND state = 'active' AND backend_type = 'client backend' AND pid <> pg_backend_pid()`, name)
			if err != nil {
				continue
			}
			for rows.Next() {
				var w string
				if rows.Scan(&w) == nil {
					counts[w]++
				}
			}
			rows.Close()
		}
	}()
	return func() map[string]int {
		close(done)
		<-finished
		return counts
	}
}

// topWaits writes the four commonest wait events with their shares.
func topWaits(counts map[string]int) string {
	type kv struct {
		k string
		v int
	}
	var all []kv
	total := 0
	for k, v := range counts {
		all = append(all, kv{k, v})
		total += v
	}
	if total == 0 {
		return "no samples"
	}
	sort.Slice(all, func(i, j int) bool { return all[i].v > all[j].v || all[i].v == all[j].v && all[i].k < all[j].k })
	var out []string
	for i, x := range all {
		if i == 4 {
			break
		}
		out = append(out, fmt.Sprintf("%s %.0f%%", x.k, 100*float64(x.v)/float64(total)))
	}
	return strings.Join(out, ", ") + fmt.Sprintf(" (%d)", total)
}

// ariaSyncs reads MariaDB's count of Aria log syncs (0 on PostgreSQL).
func ariaSyncs(ctx context.Context, db *sql.DB, e indb.Engine) int64 {
	if e != indb.MariaDB {
		return 0
	}
	var name string
	var v int64
	db.QueryRowContext(ctx, "SHOW GLOBAL STATUS LIKE 'Aria_transaction_log_syncs'").Scan(&name, &v)
	return v
}

// setup installs the function and the peers; the first variant is flurry's, the
// second its main peer.
func setup(ctx context.Context, db *sql.DB, e indb.Engine, l *layout.Layout) (vs []variant, note string, err error) {
	st := memstore.New(clock.NewSystem())
	if _, err := indb.Install(ctx, db, indb.InstallOptions{Options: indb.Options{Engine: e, Layout: l}, Leases: st, LeaseName: "memory"}); err != nil {
		return nil, "", err
	}
	var stmts []string
	if e == indb.Postgres {
		stmts = []string{
			"CREATE SEQUENCE peer_seq",
			"CREATE TABLE t_flurry (id bigint PRIMARY KEY DEFAULT flurry_next_id(), v bigint)",
			"CREATE TABLE t_serial (id bigserial PRIMARY KEY, v bigint)",
			// The row-lock design: the last tick and sequence in one row, updated
			// under its lock; correct, and every transaction that takes an ID holds
			// the lock until it ends.
			"CREATE TABLE rowlock_state (id int PRIMARY KEY, tick bigint NOT NULL, seq bigint NOT NULL)",
			"INSERT INTO rowlock_state VALUES (1, 0, 0)",
			`CREATE FUNCTION rowlock_next_id() RETURNS bigint LANGUAGE plpgsql AS $$
DECLARE t bigint; s bigint; k bigint;
BEGIN
	t := (floor(date_part('epoch', clock_timestamp()) * 1000)::bigint - 1314220021721);
	SELECT tick, seq INTO k, s FROM rowlock_state WHERE id = 1 FOR UPDATE;
	IF t > k THEN k := t; s := 0; ELSE s := s + 1; IF s > 1023 THEN k := k + 1; s := 0; END IF; END IF;
	UPDATE rowlock_state SET tick = k, seq = s WHERE id = 1;
	RETURN (k << 23) | s;
END $$`,
			"CREATE TABLE t_rowlock (id bigint PRIMARY KEY DEFAULT rowlock_next_id(), v bigint)",
			"CREATE TABLE t_uuid (id uuid PRIMARY KEY DEFAULT gen_random_uuid(), v bigint)",
		}
		vs = []variant{
			{"flurry_next_id()", "SELECT count(flurry_next_id()) FROM generate_series(1, %d)", "INSERT INTO t_flurry (v) VALUES ($1)", false},
			{"nextval()", "SELECT count(nextval('peer_seq')) FROM generate_series(1, %d)", "INSERT INTO t_serial (v) VALUES ($1)", false},
			{"row lock", "SELECT count(rowlock_next_id()) FROM generate_series(1, %d)", "INSERT INTO t_rowlock (v) VALUES ($1)", true},
			// Random UUIDs, the usual key that needs no coordination (16 bytes).
			{"gen_random_uuid()", "SELECT count(gen_random_uuid()) FROM generate_series(1, %d)", "INSERT INTO t_uuid (v) VALUES ($1)", false},
		}
		// uuidv7() is built in from PostgreSQL 18.
		var v7 bool
		if err := db.QueryRowContext(ctx, "SELECT to_regprocedure('uuidv7()') IS NOT NULL").Scan(&v7); err != nil {
			return nil, "", err
		}
		if v7 {
			stmts = append(stmts, "CREATE TABLE t_uuid7 (id uuid PRIMARY KEY DEFAULT uuidv7(), v bigint)")
			vs = append(vs, variant{"uuidv7()", "SELECT count(uuidv7()) FROM generate_series(1, %d)", "INSERT INTO t_uuid7 (v) VALUES ($1)", false})
		} else {
			note = "This server has no uuidv7() (PostgreSQL has it from version 18): not measured.\n\n"
		}
	} else {
		stmts = []string{
			"CREATE SEQUENCE peer_seq",
			"CREATE TABLE t_flurry (id BIGINT NOT NULL PRIMARY KEY, v BIGINT)",
			"CREATE TABLE t_auto (id BIGINT NOT NULL AUTO_INCREMENT PRIMARY KEY, v BIGINT)",
		}
		// AUTO_INCREMENT has no statement that takes IDs without rows, so the
		// first two compare INSERT ... SELECT of the batch, through flurry's
		// trigger and through AUTO_INCREMENT; the last two take IDs without rows.
		vs = []variant{
			{"flurry trigger, INSERT…SELECT", "INSERT INTO t_flurry (v) SELECT seq FROM seq_1_to_%d", "INSERT INTO t_flurry (v) VALUES (?)", false},
			{"AUTO_INCREMENT, INSERT…SELECT", "INSERT INTO t_auto (v) SELECT seq FROM seq_1_to_%d", "INSERT INTO t_auto (v) VALUES (?)", false},
			{"SELECT flurry_next_id()", "SELECT COUNT(flurry_next_id()) FROM seq_1_to_%d", "", false},
			{"SELECT NEXTVAL(seq)", "SELECT COUNT(NEXTVAL(peer_seq)) FROM seq_1_to_%d", "", false},
		}
	}
	for _, s := range stmts {
		if _, err := db.ExecContext(ctx, s); err != nil {
			return nil, "", fmt.Errorf("%s: %w", strings.SplitN(s, "\n", 2)[0], err)
		}
	}
	if e == indb.MariaDB {
		if _, err := indb.Install(ctx, db, indb.InstallOptions{Options: indb.Options{Engine: e, Layout: l, Targets: []indb.Target{{Table: "t_flurry", Column: "id"}}}, Leases: st, LeaseName: "memory"}); err != nil {
			return nil, "", err
		}
	}
	return vs, note, nil
}

// measure runs n sessions, each calling step on its own connection until dur has
// passed, and returns the IDs (or rows) per second that step reported.
func measure(ctx context.Context, db *sql.DB, n int, dur time.Duration, step func(*sql.Conn) (int, error)) (float64, error) {
	conns := make([]*sql.Conn, n)
	for i := range conns {
		c, err := db.Conn(ctx)
		if err != nil {
			return 0, err
		}
		defer c.Close()
		conns[i] = c
	}
	var total atomic.Int64
	var first error
	var once sync.Once
	start := time.Now()
	deadline := start.Add(dur)
	var wg sync.WaitGroup
	for _, c := range conns {
		wg.Add(1)
		go func(c *sql.Conn) {
			defer wg.Done()
			// A transaction step left open would hold its locks (the row lock's
			// row) while the other sessions wait for them: end it here.
			defer c.ExecContext(context.Background(), "COMMIT")
			for time.Now().Before(deadline) {
				got, err := step(c)
				if err != nil {
					once.Do(func() { first = err })
					return
				}
				total.Add(int64(got))
			}
		}(c)
	}
	wg.Wait()
	return float64(total.Load()) / time.Since(start).Seconds(), first
}

func median(xs []float64) float64 {
	s := append([]float64(nil), xs...)
	sort.Float64s(s)
	return s[len(s)/2]
}

func human(r float64) string {
	switch {
	case r >= 1e6:
		return fmt.Sprintf("%.2fM", r/1e6)
	case r >= 1e3:
		return fmt.Sprintf("%.1fk", r/1e3)
	}
	return fmt.Sprintf("%.0f", r)
}
