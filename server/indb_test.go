package server

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"net/url"
	"strconv"
	"testing"
	"time"

	"github.com/flurryid/flurry/clock"
	"github.com/flurryid/flurry/indb"
	"github.com/flurryid/flurry/layout"
	"github.com/flurryid/flurry/lease/memstore"
	"github.com/flurryid/flurry/verify/testenv"
)

// TestDecodeInDatabaseIDs has PostgreSQL make IDs of the instagram layout
// (flurry sql's function, node value 5) and decodes them with the route of a
// namespace of that layout: the database's node value, the time they were made.
func TestDecodeInDatabaseIDs(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	base := testenv.Postgres.URL(t)
	admin, e, _, err := indb.Open(ctx, base)
	if err != nil {
		t.Fatal(err)
	}
	defer admin.Close()
	var b [5]byte
	rand.Read(b[:])
	name := "flurry_server_" + hex.EncodeToString(b[:])
	if _, err := admin.ExecContext(ctx, "CREATE DATABASE "+name); err != nil {
		t.Fatal(err)
	}
	defer admin.ExecContext(context.Background(), "DROP DATABASE IF EXISTS "+name+" WITH (FORCE)")
	u, _ := url.Parse(base)
	u.Path = "/" + name
	db, _, _, err := indb.Open(ctx, u.String())
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	l, _ := layout.Lookup("instagram")
	five := int64(5)
	in, err := indb.Install(ctx, db, indb.InstallOptions{Options: indb.Options{Engine: e, Layout: l},
		Leases: memstore.New(clock.NewSystem()), LeaseName: "memory", Fixed: &five})
	if err != nil {
		t.Fatal(err)
	}
	var id int64
	if err := db.QueryRowContext(ctx, "SELECT "+in.Function+"()").Scan(&id); err != nil {
		t.Fatal(err)
	}
	_, hs := newServer(t, "namespaces:\n  shop:\n    strategy: snowflake\n    snowflake: {layout: instagram, lease: {fixed: 9}}\n", nil)
	code, _, body := get(t, hs.URL+"/v1/shop/decode/"+strconv.FormatInt(id, 10))
	var res struct {
		Time   time.Time
		Fields []struct{ Name, Value string }
	}
	if code != 200 || json.Unmarshal([]byte(body), &res) != nil {
		t.Fatalf("%d %q", code, body)
	}
	if len(res.Fields) != 1 || res.Fields[0].Name != "shard" || res.Fields[0].Value != "5" || time.Since(res.Time) > time.Minute || time.Since(res.Time) < -time.Minute {
		t.Errorf("decoded %q; want shard 5 and the time of the call", body)
	}
}
