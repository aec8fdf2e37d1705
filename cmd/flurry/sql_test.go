//go:build flurry_full || flurry_sql

package main

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"net/url"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/flurryid/flurry/indb"
	"github.com/flurryid/flurry/verify/testenv"
)

// TestSQLInstallDecode runs what docs/in-database.md shows: flurry sql install
// with the instagram layout and the database as its own lease store, rows that
// take their id from the DEFAULT (PostgreSQL) or the trigger (MariaDB), flurry
// decode of those IDs with the database's node value, status, and uninstall.
func TestSQLInstallDecode(t *testing.T) {
	for _, svc := range []testenv.Service{testenv.Postgres, testenv.MySQL} {
		t.Run(svc.Name, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
			defer cancel()
			base := svc.URL(t)
			admin, e, _, err := indb.Open(ctx, base)
			if err != nil {
				t.Fatal(err)
			}
			defer admin.Close()
			var b [5]byte
			rand.Read(b[:])
			name := "flurry_cli_" + hex.EncodeToString(b[:])
			if _, err := admin.ExecContext(ctx, "CREATE DATABASE "+name); err != nil {
				t.Fatal(err)
			}
			defer func() {
				drop := "DROP DATABASE IF EXISTS " + name
				if e == indb.Postgres {
					drop += " WITH (FORCE)"
				}
				admin.ExecContext(context.Background(), drop)
			}()
			u, _ := url.Parse(base)
			u.Path = "/" + name
			dbURL := u.String()
			db, _, _, err := indb.Open(ctx, dbURL)
			if err != nil {
				t.Fatal(err)
			}
			defer db.Close()
			if _, err := db.ExecContext(ctx, "CREATE TABLE orders (id BIGINT NOT NULL PRIMARY KEY, item VARCHAR(20))"); err != nil {
				t.Fatal(err)
			}
			r := cli(t, "", "sql", "install", dbURL, "--layout", "instagram", "--table", "orders", "--column", "id")
			if r.code != 0 || !strings.Contains(r.stdout, "installed flurry_next_id") || !strings.Contains(r.stdout, "leased from this database") {
				t.Fatalf("sql install: %+v", r)
			}
			if _, err := db.ExecContext(ctx, "INSERT INTO orders (item) VALUES ('a'), ('b'), ('c')"); err != nil {
				t.Fatal(err)
			}
			rows, err := db.QueryContext(ctx, "SELECT id FROM orders ORDER BY item")
			if err != nil {
				t.Fatal(err)
			}
			var ids []string
			for rows.Next() {
				var id int64
				rows.Scan(&id)
				ids = append(ids, strconv.FormatInt(id, 10))
			}
			rows.Close()
			status := cli(t, "", "sql", "status", dbURL)
			if status.code != 0 || !strings.Contains(status.stdout, "node:      shard=") {
				t.Fatalf("sql status: %+v", status)
			}
			node := strings.TrimSpace(strings.SplitN(strings.SplitN(status.stdout, "node:      shard=", 2)[1], "\n", 2)[0])
			dec := cli(t, "", append([]string{"decode", "--layout", "instagram"}, ids...)...)
			if dec.code != 0 || len(lines(dec.stdout)) != 3 {
				t.Fatalf("decode: %+v", dec)
			}
			var prev int64
			for _, line := range lines(dec.stdout) {
				var d struct {
					ID    string    `json:"id"`
					Time  time.Time `json:"time"`
					Shard int64     `json:"shard"`
				}
				if err := json.Unmarshal([]byte(line), &d); err != nil {
					t.Fatal(err)
				}
				id, _ := strconv.ParseInt(d.ID, 10, 64)
				if strconv.FormatInt(d.Shard, 10) != node || time.Since(d.Time) > time.Minute || id <= prev {
					t.Errorf("decoded %s: shard %d (want %s), time %s, after %d", line, d.Shard, node, d.Time, prev)
				}
				prev = id
			}
			un := cli(t, "", "sql", "uninstall", dbURL)
			if un.code != 0 || !strings.Contains(un.stdout, "released node value") {
				t.Fatalf("sql uninstall: %+v", un)
			}
		})
	}
}
