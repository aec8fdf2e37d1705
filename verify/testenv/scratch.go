package testenv

import (
	"context"
	"crypto/rand"
	"database/sql"
	"encoding/hex"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/go-sql-driver/mysql"
	_ "github.com/jackc/pgx/v5/stdlib" // the pgx driver for ScratchDB
)

// ScratchDB makes an empty database (MySQL, MariaDB) or schema (PostgreSQL) named
// flurry_compat_<random> on s, for tests whose tables have fixed names (Leaf's
// leaf_alloc, tinyid's tiny_id_info) and so cannot be made unique. It returns a
// store URL that points into it (mysql://.../NAME, or postgres://...?search_path=NAME)
// and a *sql.DB on it; both go away when the test ends. It skips or fails as URL
// does when s does not answer. s must be Postgres or MySQL.
func ScratchDB(t testing.TB, s Service) (string, *sql.DB) {
	t.Helper()
	raw := s.URL(t)
	var b [6]byte
	rand.Read(b[:])
	name := "flurry_compat_" + hex.EncodeToString(b[:])
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	u, err := url.Parse(raw)
	if err != nil {
		t.Fatal(err)
	}
	var admin, db *sql.DB
	var drop string
	switch u.Scheme {
	case "mysql":
		cfg := mysql.NewConfig()
		cfg.Net, cfg.Addr = "tcp", u.Host
		if u.User != nil {
			cfg.User = u.User.Username()
			cfg.Passwd, _ = u.User.Password()
		}
		cfg.ParseTime = true
		conn, err := mysql.NewConnector(cfg)
		if err != nil {
			t.Fatal(err)
		}
		admin = sql.OpenDB(conn)
		if _, err := admin.ExecContext(ctx, "CREATE DATABASE "+name); err != nil {
			admin.Close()
			t.Fatalf("%s: CREATE DATABASE: %v", s.Name, err)
		}
		drop = "DROP DATABASE IF EXISTS " + name
		cfg.DBName = name
		conn, _ = mysql.NewConnector(cfg)
		db = sql.OpenDB(conn)
		u.Path = "/" + name
	case "postgres", "postgresql":
		admin, err = sql.Open("pgx", raw)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := admin.ExecContext(ctx, "CREATE SCHEMA "+name); err != nil {
			admin.Close()
			t.Fatalf("%s: CREATE SCHEMA: %v", s.Name, err)
		}
		drop = "DROP SCHEMA IF EXISTS " + name + " CASCADE"
		q := u.Query()
		q.Set("search_path", name)
		u.RawQuery = q.Encode()
		db, err = sql.Open("pgx", u.String())
		if err != nil {
			t.Fatal(err)
		}
	default:
		t.Fatalf("ScratchDB: %s is not PostgreSQL or MySQL", strings.SplitN(raw, ":", 2)[0])
	}
	t.Cleanup(func() {
		db.Close()
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		if _, err := admin.ExecContext(ctx, drop); err != nil {
			t.Errorf("%s: %s: %v", s.Name, drop, err)
		}
		admin.Close()
	})
	return u.String(), db
}
