package main

import (
	"bufio"
	"context"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"time"
)

// etcdCounters are the etcd server counters a run reports the growth of: what one
// store call costs inside etcd (Raft proposals, WAL fsyncs, MVCC operations).
const etcdCounters = "etcd_server_proposals_committed_total,etcd_disk_wal_fsync_duration_seconds_count," +
	"etcd_mvcc_put_total,etcd_mvcc_txn_total,etcd_mvcc_range_total,etcd_mvcc_delete_total"

// scrape reads the unlabelled samples named in names from a Prometheus text
// endpoint, such as etcd's /metrics.
func scrape(ctx context.Context, url string, names []string) (map[string]float64, error) {
	ctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return nil, err
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("%s: %s", url, resp.Status)
	}
	want := map[string]bool{}
	for _, n := range names {
		want[n] = true
	}
	out := map[string]float64{}
	sc := bufio.NewScanner(resp.Body)
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	for sc.Scan() {
		name, val, ok := strings.Cut(sc.Text(), " ")
		if !ok || !want[name] {
			continue
		}
		if v, err := strconv.ParseFloat(strings.TrimSpace(val), 64); err == nil {
			out[name] = v
		}
	}
	return out, sc.Err()
}
