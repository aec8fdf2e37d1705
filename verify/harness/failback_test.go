package harness

import "testing"

// TestReplicaSynced: the fail-back waits for the old primary, restarted empty,
// to hold the data. It used to ask for the failover as soon as the primary
// listed it and any replica was online: the restarted one, still waiting for
// its first sync, was promoted empty, and the rg namespace's node key and
// counter were gone.
func TestReplicaSynced(t *testing.T) {
	const addr = "10.213.0.4"
	primary := func(state, lag string) string {
		return "# Replication\r\nrole:master\r\nconnected_slaves:2\r\n" +
			"slave0:ip=10.213.0.6,port=6379,state=online,offset=5000,lag=0\r\n" +
			"slave1:ip=" + addr + ",port=6379,state=" + state + ",offset=0,lag=" + lag + "\r\n" +
			"master_repl_offset:5000\r\n"
	}
	const synced = "# Replication\r\nrole:slave\r\nmaster_link_status:up\r\nmaster_sync_in_progress:0\r\n"
	const syncing = "# Replication\r\nrole:slave\r\nmaster_link_status:down\r\nmaster_sync_in_progress:1\r\n"
	for _, tc := range []struct {
		name, primary, replica string
		ok                     bool
	}{
		{"in sync", primary("online", "0"), synced, true},
		{"lag of a second", primary("online", "1"), synced, true},
		{"waiting for its first sync", primary("wait_bgsave", "0"), syncing, false},
		{"receiving the RDB", primary("send_bulk", "0"), syncing, false},
		{"online, link down", primary("online", "0"), syncing, false},
		{"lagging", primary("online", "7"), synced, false},
		{"not listed", "# Replication\r\nrole:master\r\nslave0:ip=10.213.0.6,port=6379,state=online,offset=5000,lag=0\r\n", synced, false},
		{"another address with this prefix", "slave0:ip=" + addr + "1,port=6379,state=online,offset=5000,lag=0\r\n", synced, false},
	} {
		why := replicaSynced(tc.primary, tc.replica, addr)
		if (why == "") != tc.ok {
			t.Errorf("%s: replicaSynced = %q; want ok=%v", tc.name, why, tc.ok)
		}
	}
}
