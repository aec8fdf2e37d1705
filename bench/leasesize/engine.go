package main

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/redis/go-redis/v9"
	clientv3 "go.etcd.io/etcd/client/v3"

	"github.com/flurryid/flurry/lease"
	"github.com/flurryid/flurry/lease/etcdstore"
	"github.com/flurryid/flurry/lease/filestore"
	"github.com/flurryid/flurry/lease/redisstore"
	"github.com/flurryid/flurry/lease/sqlstore"
	"github.com/flurryid/flurry/lease/zkstore"
	"github.com/go-zookeeper/zk"
)

// engineName names the engine behind a store for the report.
func engineName(st lease.Store) string {
	switch s := st.(type) {
	case *sqlstore.Store:
		return s.Dialect().String()
	case *etcdstore.Store:
		return "etcd"
	case *redisstore.Store:
		return "redis"
	case *filestore.Store:
		return "file"
	case *zkstore.Store:
		return "zookeeper"
	}
	return fmt.Sprintf("%T", st)
}

// limitPool caps a SQL store's connection pool at n (database/sql's default has no
// cap, and one process holding thousands of sessions would open a connection per
// concurrent call). It returns what it set, for the report.
func limitPool(st lease.Store, n int) string {
	s, ok := st.(*sqlstore.Store)
	if !ok {
		return ""
	}
	s.DB().SetMaxOpenConns(n)
	s.DB().SetMaxIdleConns(n)
	return fmt.Sprintf("at most %d connections", n)
}

// ownBackends returns the pids of the PostgreSQL server processes that serve this
// store's connections: those with the store's application_name (set it in the
// URL). It returns nil for other stores, or without an application_name.
func ownBackends(ctx context.Context, st lease.Store) []int {
	s, ok := st.(*sqlstore.Store)
	if !ok || s.Dialect() != sqlstore.Postgres {
		return nil
	}
	ctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	rows, err := s.DB().QueryContext(ctx, `SELECT pid FROM pg_stat_activity
		WHERE application_name = current_setting('application_name') AND application_name <> ''`)
	if err != nil {
		return nil
	}
	defer rows.Close()
	var pids []int
	for rows.Next() {
		var pid int
		if rows.Scan(&pid) == nil {
			pids = append(pids, pid)
		}
	}
	return pids
}

// cleanup deletes what the run wrote under scopes starting with base: the mark keys,
// rows or files that Release leaves behind (the store keeps marks for good, so only
// the engine itself can delete them). It returns what it deleted.
func cleanup(ctx context.Context, rawURL string, st lease.Store, base string) (string, error) {
	ctx, cancel := context.WithTimeout(ctx, 60*time.Second)
	defer cancel()
	switch s := st.(type) {
	case *sqlstore.Store:
		q := "DELETE FROM " + s.Table() + " WHERE scope LIKE ?"
		if s.Dialect() == sqlstore.Postgres {
			q = "DELETE FROM " + s.Table() + " WHERE scope LIKE $1"
		}
		res, err := s.DB().ExecContext(ctx, q, base+"%")
		if err != nil {
			return "", err
		}
		n, _ := res.RowsAffected()
		return fmt.Sprintf("%d rows of %s", n, s.Table()), nil
	case *etcdstore.Store:
		o, err := etcdstore.ParseURL(rawURL)
		if err != nil {
			return "", err
		}
		cfg := o.Client
		if cfg.DialTimeout == 0 {
			cfg.DialTimeout = 5 * time.Second
		}
		cli, err := clientv3.New(cfg)
		if err != nil {
			return "", err
		}
		defer cli.Close()
		prefix := strings.TrimRight(o.Prefix, "/")
		if prefix == "" {
			prefix = etcdstore.DefaultPrefix
		}
		r, err := cli.Delete(ctx, prefix+"/"+base, clientv3.WithPrefix())
		if err != nil {
			return "", err
		}
		return fmt.Sprintf("%d keys under %s/%s", r.Deleted, prefix, base), nil
	case *redisstore.Store:
		o, err := redisstore.ParseURL(rawURL)
		if err != nil {
			return "", err
		}
		var cli *redis.Client
		switch {
		case o.Client != nil:
			cli = redis.NewClient(o.Client)
		case o.Failover != nil:
			cli = redis.NewFailoverClient(o.Failover)
		default:
			return "", fmt.Errorf("no Redis client options in the URL")
		}
		defer cli.Close()
		prefix := o.Prefix
		if prefix == "" {
			prefix = redisstore.DefaultPrefix
		}
		// A scope's keys are {prefix:scope}:name (the hash tag keeps them in one slot).
		var n int
		iter := cli.Scan(ctx, 0, "{"+prefix+":"+base+"*", 1000).Iterator()
		var batch []string
		flush := func() error {
			if len(batch) == 0 {
				return nil
			}
			err := cli.Del(ctx, batch...).Err()
			n += len(batch)
			batch = batch[:0]
			return err
		}
		for iter.Next(ctx) {
			batch = append(batch, iter.Val())
			if len(batch) == 500 {
				if err := flush(); err != nil {
					return "", err
				}
			}
		}
		if err := iter.Err(); err != nil {
			return "", err
		}
		if err := flush(); err != nil {
			return "", err
		}
		return fmt.Sprintf("%d keys {%s:%s*}", n, prefix, base), nil
	case *zkstore.Store:
		return cleanupZK(rawURL, base)
	case *filestore.Store:
		// A scope's files are named after it ("/" and ":" replaced), then a hash.
		ents, err := os.ReadDir(s.Dir())
		if err != nil {
			return "", err
		}
		var n int
		for _, e := range ents {
			if strings.HasPrefix(e.Name(), base) {
				if err := os.Remove(filepath.Join(s.Dir(), e.Name())); err != nil {
					return "", err
				}
				n++
			}
		}
		return fmt.Sprintf("%d files in %s", n, s.Dir()), nil
	}
	return "nothing: this store has no cleanup", nil
}

// cleanupZK deletes the run's scope nodes (named after the scope, "/" as %2F) and
// their value nodes under the URL's prefix, with a client of its own.
func cleanupZK(rawURL, base string) (string, error) {
	o, err := zkstore.ParseURL(rawURL)
	if err != nil {
		return "", err
	}
	conn, _, err := zk.Connect(o.Servers, 10*time.Second, zk.WithLogInfo(false))
	if err != nil {
		return "", err
	}
	defer conn.Close()
	root := "/" + strings.Trim(cmp.Or(o.Prefix, zkstore.DefaultPrefix), "/")
	scopes, _, err := conn.Children(root)
	if err != nil {
		return "", err
	}
	var n int
	for _, sc := range scopes {
		if !strings.HasPrefix(sc, base) {
			continue
		}
		p := root + "/" + sc
		kids, _, err := conn.Children(p)
		if err != nil {
			return "", err
		}
		for _, k := range kids {
			if err := conn.Delete(p+"/"+k, -1); err != nil && !errors.Is(err, zk.ErrNoNode) {
				return "", err
			}
			n++
		}
		if err := conn.Delete(p, -1); err != nil && !errors.Is(err, zk.ErrNoNode) {
			return "", err
		}
	}
	return fmt.Sprintf("%d nodes under %s/%s*", n, root, base), nil
}
