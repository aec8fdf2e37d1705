package main

import (
	"encoding/json"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/flurryid/flurry/internal/testenv"
	"github.com/flurryid/flurry/segment/segmenttest"
)

func TestSegmentCreateGenList(t *testing.T) {
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
