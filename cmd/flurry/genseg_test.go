package main

import (
	"bufio"
	"bytes"
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"io/fs"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	_ "modernc.org/sqlite"

	"github.com/flurryid/flurry/verify/segmenttest"
	"github.com/flurryid/flurry/verify/testenv"
)

func TestSegmentCreateGenList(t *testing.T) {
	testenv.NeedScheme(t, "sqlite")
	db := "sqlite://" + filepath.Join(t.TempDir(), "ids.db")
	if r := cli(t, "", "segment", "create", db, "order", "--step", "100", "--description", "orders"); r.code != 0 || !strings.Contains(r.stderr, "created tag order: first ID 1, step 100") {
		t.Fatalf("segment create: %+v", r)
	}
	wantOneLineError(t, cli(t, "", "segment", "create", db, "order"), 1, "exists already")
	// Two runs one after the other continue without a gap: the first hands back
	// what it did not print.
	next := 1
	for run := 0; run < 3; run++ {
		r := cli(t, "", "gen", "--segment", db, "--tag", "order", "-n", "25")
		if r.code != 0 {
			t.Fatalf("gen --segment: %+v", r)
		}
		if !strings.HasPrefix(r.stderr, "flurry: gen: serving tag order from sqlite://") {
			t.Errorf("stderr %q does not say what it serves", r.stderr)
		}
		for _, line := range lines(r.stdout) {
			if line != strconv.Itoa(next) {
				t.Fatalf("run %d printed %s, want %d (no gap after a graceful exit)", run, line, next)
			}
			next++
		}
	}
	r := cli(t, "", "segment", "list", "--json", db)
	var tags []map[string]any
	if err := json.Unmarshal([]byte(r.stdout), &tags); err != nil || len(tags) != 1 {
		t.Fatalf("segment list --json: %v %+v", err, r)
	}
	if tags[0]["tag"] != "order" || tags[0]["step"] != 100.0 || tags[0]["description"] != "orders" {
		t.Fatalf("listed %v", tags[0])
	}
	if r := cli(t, "", "segment", "set-step", db, "order", "5000"); r.code != 0 {
		t.Fatalf("set-step: %+v", r)
	}
	r = cli(t, "", "segment", "list", db)
	if r.code != 0 || !strings.Contains(r.stdout, "order") || !strings.Contains(r.stdout, "5000") {
		t.Fatalf("segment list after set-step: %+v", r)
	}
}

func TestSegmentErrors(t *testing.T) {
	testenv.NeedScheme(t, "sqlite")
	db := "sqlite://" + filepath.Join(t.TempDir(), "ids.db")
	for _, c := range []struct {
		args  []string
		code  int
		wants []string
	}{
		{[]string{"gen", "--segment", db}, 2, []string{"--tag"}},
		{[]string{"gen", "--tag", "order"}, 2, []string{"only with --segment"}},
		{[]string{"gen", "--segment", db, "--tag", "order", "--layout", "twitter"}, 2, []string{"--layout does not apply"}},
		{[]string{"gen", "--segment", db, "--tag", "bad tag"}, 2, []string{"letters, digits"}},
		{[]string{"gen", "--segment", db, "--tag", "missing"}, 1, []string{"unknown tag", "segment create"}},
		{[]string{"gen", "--segment", "bogus://x", "--tag", "order"}, 1, []string{"unknown store scheme"}},
		{[]string{"segment", "create", db}, 2, []string{"store URL and a tag"}},
		{[]string{"segment", "create", db, "t", "--step", "0"}, 2, []string{"step 0"}},
		{[]string{"segment", "set-step", db, "order", "many"}, 2, []string{"not a whole number"}},
		{[]string{"segment", "set-step", db, "missing", "10"}, 1, []string{"unknown tag"}},
		{[]string{"segment", "bogus"}, 2, []string{"unknown command"}},
	} {
		t.Run(strings.Join(c.args[:2], " "), func(t *testing.T) {
			wantOneLineError(t, cli(t, "", c.args...), c.code, c.wants...)
		})
	}
}

func TestSegmentPostgres(t *testing.T) {
	testenv.NeedScheme(t, "postgres")
	raw := testenv.Postgres.URL(t)
	tag := segmenttest.TagName(t)
	if r := cli(t, "", "segment", "create", raw, tag, "--step", "10"); r.code != 0 {
		t.Fatalf("create: %+v", r)
	}
	r := cli(t, "", "gen", "--segment", raw, "--tag", tag, "-n", "3")
	if r.code != 0 || r.stdout != "1\n2\n3\n" {
		t.Fatalf("gen on PostgreSQL: %+v", r)
	}
}

// lockedBuffer collects a process's stderr while the test reads it.
type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

// proxiedURL returns raw with its host replaced by a proxy the test can cut or hang.
func proxiedURL(t *testing.T, raw string) (string, *testenv.Proxy) {
	u, err := url.Parse(raw)
	if err != nil {
		t.Fatal(err)
	}
	p := testenv.StartProxy(t, u.Host)
	u.Host = p.Addr()
	return u.String(), p
}

// TestGenSegmentStoreDownAtStart runs `flurry gen --segment A --segment B` as a
// process with A (PostgreSQL, residue class 0) refusing or hanging: gen starts and
// prints B's IDs (MariaDB, class 1), A joins in the background once it is back, and
// when B goes away gen goes on with A's IDs, strictly increasing throughout. Before
// OpenStores gen refused to start ("connection refused").
func TestGenSegmentStoreDownAtStart(t *testing.T) {
	testenv.NeedScheme(t, "postgres")
	bin := buildServe(t)
	for _, fault := range []string{"refused", "hanging"} {
		t.Run(fault, func(t *testing.T) {
			a, pa := proxiedURL(t, testenv.Postgres.URL(t))
			b, pb := proxiedURL(t, testenv.MySQL.URL(t))
			tag := segmenttest.TagName(t)
			for _, u := range []string{a, b} {
				if r := cli(t, "", "segment", "create", u, tag, "--step", "10"); r.code != 0 {
					t.Fatalf("create in %s: %+v", u, r)
				}
			}
			if fault == "refused" {
				pa.Cut()
			} else {
				pa.Hang()
			}
			ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
			defer cancel()
			cmd := exec.CommandContext(ctx, bin, "gen", "--segment", a, "--segment", b, "--tag", tag, "-n", "100000000")
			stderr := &lockedBuffer{}
			cmd.Stderr = stderr
			stdout, err := cmd.StdoutPipe()
			if err != nil {
				t.Fatal(err)
			}
			if err := cmd.Start(); err != nil {
				t.Fatal(err)
			}
			sc := bufio.NewScanner(stdout)
			var last int64
			next := func() int64 {
				t.Helper()
				if !sc.Scan() {
					cmd.Wait()
					t.Fatalf("gen stopped after %d: %v (stderr %q)", last, sc.Err(), stderr.String())
				}
				id, err := strconv.ParseInt(sc.Text(), 10, 64)
				if err != nil || id <= last {
					t.Fatalf("gen printed %q after %d", sc.Text(), last)
				}
				last = id
				return id
			}
			for i := 0; i < 100; i++ {
				if id := next(); id%2 != 1 {
					t.Fatalf("ID %d while only MariaDB (class 1) was up", id)
				}
			}
			if !strings.Contains(stderr.String(), "a store is down; starting without it") {
				t.Errorf("stderr %q does not say that a store is down", stderr.String())
			}

			pa.Restore()
			for deadline := time.Now().Add(time.Minute); !strings.Contains(stderr.String(), "serves from now on"); {
				if time.Now().After(deadline) {
					t.Fatalf("PostgreSQL never joined; stderr %q", stderr.String())
				}
				time.Sleep(20 * time.Millisecond)
			}
			pb.Cut()
			// gen serves what it buffered from MariaDB, then moves to PostgreSQL.
			even := 0
			for i := 0; even == 0; i++ {
				if i == 20_000_000 {
					t.Fatalf("no ID from PostgreSQL in %d lines after MariaDB went away; stderr %q", i, stderr.String())
				}
				even = 1 - int(next()%2)
			}
			for i := 0; i < 1000; i++ {
				if id := next(); id%2 != 0 {
					t.Fatalf("ID %d from MariaDB after it went away", id)
				}
			}
			pb.Restore()
			stdout.Close() // gen ends, quietly, as under `| head`
			if err := cmd.Wait(); err != nil {
				t.Fatalf("gen: %v (stderr %q)", err, stderr.String())
			}
		})
	}
}

// TestSegmentListCreatesNothing: listing a SQLite store that does not exist, or
// has no tables, fails without creating the file or a table; only segment create
// creates them.
func TestSegmentListCreatesNothing(t *testing.T) {
	testenv.NeedScheme(t, "sqlite")
	dir := t.TempDir()
	missing := filepath.Join(dir, "missing.db")
	wantOneLineError(t, cli(t, "", "segment", "list", "sqlite://"+missing), 1, missing+" does not exist", "flurry segment create")
	if _, err := os.Stat(missing); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("segment list made %s: %v", missing, err)
	}

	empty := filepath.Join(dir, "empty.db")
	if err := os.WriteFile(empty, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	for _, args := range [][]string{{"segment", "list", "sqlite://" + empty}, {"segment", "set-step", "sqlite://" + empty, "order", "10"}} {
		r := cli(t, "", args...)
		wantOneLineError(t, r, 1, "segment "+args[1]+": ", "table flurry_segment is missing")
		if tables := sqliteTables(t, empty); len(tables) != 0 {
			t.Errorf("%s made tables %v", strings.Join(args, " "), tables)
		}
	}

	if r := cli(t, "", "segment", "create", "sqlite://"+empty, "order"); r.code != 0 {
		t.Fatalf("segment create: %+v", r)
	}
	if r := cli(t, "", "segment", "list", "sqlite://"+empty); r.code != 0 || !strings.Contains(r.stdout, "order") {
		t.Errorf("segment list after create: %+v", r)
	}
}

// sqliteTables lists the tables of the SQLite database at path.
func sqliteTables(t *testing.T, path string) []string {
	t.Helper()
	db, err := sql.Open("sqlite", path)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	rows, err := db.Query("SELECT name FROM sqlite_master WHERE type = 'table'")
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	var names []string
	for rows.Next() {
		var n string
		if err := rows.Scan(&n); err != nil {
			t.Fatal(err)
		}
		names = append(names, n)
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	return names
}

// TestGenSegmentClockSkew: gen --segment announces FLURRY_CLOCK_SKEW as every
// other gen does, and says that segment IDs do not depend on it.
func TestGenSegmentClockSkew(t *testing.T) {
	store := "file://" + t.TempDir()
	if r := cli(t, "", "segment", "create", store, "order"); r.code != 0 {
		t.Fatalf("segment create: %+v", r)
	}
	t.Setenv(skewEnv, "-1h")
	r := cli(t, "", "gen", "--segment", store, "--tag", "order", "-n", "3")
	want := "flurry: WARNING: FLURRY_CLOCK_SKEW=-1h: this process's clock is shifted by -1h0m0s FOR TESTING; never set it in production\n" +
		"flurry: gen --segment: segment IDs are counters in the store, which the shift does not move\n"
	if r.code != 0 || !strings.HasPrefix(r.stderr, want) || r.stdout != "1\n2\n3\n" {
		t.Fatalf("skewed gen --segment: %+v\nwant stderr starting %q", r, want)
	}
	t.Setenv(skewEnv, "soon")
	wantOneLineError(t, cli(t, "", "gen", "--segment", store, "--tag", "order"), 1, `FLURRY_CLOCK_SKEW="soon" is not a duration`)
}
