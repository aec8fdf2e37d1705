//go:build flurry_full || flurry_sql

package hatest

import (
	"context"
	"crypto/rand"
	"fmt"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/flurryid/flurry/verify/testenv"
)

// TestPostgresHostList runs the lease and segment stores on a PostgreSQL URL with
// a host list whose first host refuses connections, or accepts them and never
// answers, and whose second is the real server:
// postgres://u@first,real/db?target_session_attrs=read-write.
func TestPostgresHostList(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: waits out connection timeouts to hosts that never answer; run: go test -tags flurry_full ./verify/hatest/")
	}
	real, err := url.Parse(testenv.Postgres.URL(t))
	if err != nil {
		t.Fatal(err)
	}
	suffix := strings.ToLower(rand.Text()[:8])
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		conn, err := pgx.Connect(ctx, real.String())
		if err != nil {
			t.Logf("dropping the test tables: %v", err)
			return
		}
		defer conn.Close(ctx)
		rows, err := conn.Query(ctx, "SELECT tablename FROM pg_tables WHERE tablename LIKE $1", "fc_ha_%"+suffix+"%")
		if err != nil {
			t.Logf("dropping the test tables: %v", err)
			return
		}
		names, err := pgx.CollectRows(rows, pgx.RowTo[string])
		if err != nil {
			t.Logf("listing the test tables: %v", err)
		}
		for _, n := range names {
			if _, err := conn.Exec(ctx, "DROP TABLE IF EXISTS "+pgx.Identifier{n}.Sanitize()); err != nil {
				t.Logf("drop %s: %v", n, err)
			}
		}
	})
	for _, first := range []struct{ name, addr string }{
		{"refused", fmt.Sprintf("127.0.0.1:%d", testenv.FreePort(t))},
		{"hanging", testenv.StartBlackhole(t)},
	} {
		t.Run(first.name, func(t *testing.T) {
			u := *real
			u.Host = first.addr + "," + real.Host
			q := u.Query()
			q.Set("target_session_attrs", "read-write")
			u.RawQuery = q.Encode()
			lu, su := u, u
			q.Set("table", "fc_ha_l"+suffix)
			lu.RawQuery = q.Encode()
			q.Set("table", "fc_ha_s"+suffix)
			su.RawQuery = q.Encode()
			exercise(t, lu.String(), su.String(), func() {})
		})
	}
}
