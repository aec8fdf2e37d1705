package indb_test

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/flurryid/flurry/indb"
	"github.com/flurryid/flurry/layout"
)

// TestEmitRefuses checks the options Emit refuses, each with ErrOptions and a
// message that names the problem.
func TestEmitRefuses(t *testing.T) {
	l := mustLayout(t, "instagram")
	for _, tc := range []struct {
		name string
		o    indb.Options
		want string
	}{
		{"no engine", indb.Options{Layout: l}, "engine"},
		{"no layout", indb.Options{Engine: indb.Postgres}, "no layout"},
		{"bad function", indb.Options{Engine: indb.Postgres, Layout: l, Function: "Next-ID"}, "function name"},
		{"long function", indb.Options{Engine: indb.MariaDB, Layout: l, Function: strings.Repeat("f", 41)}, "function name"},
		{"bad schema", indb.Options{Engine: indb.Postgres, Layout: l, Schema: "a;b"}, "schema"},
		{"node out of range", indb.Options{Engine: indb.Postgres, Layout: l, Node: layout.NodeValues{1 << 13}}, "node values"},
		{"bad table", indb.Options{Engine: indb.MariaDB, Layout: l, Targets: []indb.Target{{Table: "t`x", Column: "id"}}}, "table"},
		{"wait over a minute", indb.Options{Engine: indb.Postgres, Layout: l, MaxWait: 2 * time.Minute}, "longer than a minute"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := indb.Emit(tc.o)
			if !errors.Is(err, indb.ErrOptions) || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("Emit: %v; want ErrOptions naming %q", err, tc.want)
			}
		})
	}
}

// TestEmitScript checks the shape of the scripts: the names, the targets, the
// MariaDB client's delimiters, and that the test clock appears only when asked.
func TestEmitScript(t *testing.T) {
	l := mustLayout(t, "instagram")
	pg, err := indb.Emit(indb.Options{Engine: indb.Postgres, Layout: l, Function: "order_id", Schema: "App", Targets: []indb.Target{{Table: "Orders", Column: "id"}}})
	if err != nil {
		t.Fatal(err)
	}
	text := pg.String()
	for _, want := range []string{`"App".order_id()`, `"App".order_id_ctr`, `"App".order_id_slow()`, `ALTER TABLE "Orders" ALTER COLUMN "id" SET DEFAULT "App".order_id()`} {
		if !strings.Contains(text, want) {
			t.Errorf("PostgreSQL script lacks %q", want)
		}
	}
	if strings.Contains(text, "test_clock_offset_ms") {
		t.Error("PostgreSQL script reads the test clock without Options.TestClock")
	}
	my, err := indb.Emit(indb.Options{Engine: indb.MariaDB, Layout: l, TestClock: true, Targets: []indb.Target{{Table: "orders", Column: "id"}}})
	if err != nil {
		t.Fatal(err)
	}
	text = my.String()
	for _, want := range []string{"DELIMITER $$\nCREATE OR REPLACE FUNCTION flurry_next_id_slow(n0 BIGINT)", "DELIMITER $$\nCREATE OR REPLACE FUNCTION flurry_next_id_claim(n BIGINT)", "DELIMITER $$\nCREATE OR REPLACE FUNCTION flurry_next_id() RETURNS BIGINT", "BEFORE INSERT ON `orders`", "@flurry_test_clock_offset_ms", "ENGINE=Aria TRANSACTIONAL=1"} {
		if !strings.Contains(text, want) {
			t.Errorf("MariaDB script lacks %q", want)
		}
	}
	un := my.UninstallText()
	for _, want := range []string{"DROP TRIGGER IF EXISTS flurry_next_id_t", "DROP FUNCTION IF EXISTS flurry_next_id", "DROP FUNCTION IF EXISTS flurry_next_id_claim", "DROP TABLE IF EXISTS flurry_next_id_counter"} {
		if !strings.Contains(un, want) {
			t.Errorf("MariaDB uninstall script lacks %q", want)
		}
	}
}
