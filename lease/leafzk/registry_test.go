package leafzk

import (
	"strings"
	"testing"
	"time"
)

// TestEndpointBytes: the data flurry writes is byte for byte what Jackson writes
// for Leaf's Endpoint, and what Leaf's reader (which refuses unknown fields)
// reads back.
func TestEndpointBytes(t *testing.T) {
	e := endpoint{IP: "10.0.0.5", Port: "8080", Timestamp: 1700000000123}
	got := string(e.marshal())
	if want := `{"ip":"10.0.0.5","port":"8080","timestamp":1700000000123}`; got != want {
		t.Fatalf("marshal = %s; want %s", got, want)
	}
	ip, port, ts, err := deBuildData([]byte(got))
	if err != nil || ip != e.IP || port != e.Port || ts != e.Timestamp {
		t.Fatalf("Leaf reads %q, %q, %d, %v", ip, port, ts, err)
	}
	for _, tc := range []struct {
		data string
		want endpoint
		err  string
	}{
		{data: got, want: e},
		{data: `{"timestamp":5,"port":8080,"ip":"::1"}`, want: endpoint{IP: "::1", Port: "8080", Timestamp: 5}},
		{data: `{"ip":"a","port":"1","timestamp":"77"}`, want: endpoint{IP: "a", Port: "1", Timestamp: 77}},
		{data: `{"ip":"a","port":"1","timestamp":1,"owner":"x"}`, err: `field "owner"`},
		{data: `{"ip":"a","port":"1"}`, err: "no \"timestamp\""},
		{data: ``, err: "not Leaf's"},
		{data: `[1]`, err: "not Leaf's"},
		{data: `{"ip":"a","port":"1","timestamp":1.5}`, err: "not Leaf's"},
	} {
		e, err := parseEndpoint([]byte(tc.data))
		if tc.err != "" {
			if err == nil || !strings.Contains(err.Error(), tc.err) {
				t.Errorf("parseEndpoint(%s) = %+v, %v; want an error with %q", tc.data, e, err, tc.err)
			}
			continue
		}
		if err != nil || e != tc.want {
			t.Errorf("parseEndpoint(%s) = %+v, %v; want %+v", tc.data, e, err, tc.want)
		}
	}
}

// TestNodeNames reads the registry's children as Leaf does (split on "-").
func TestNodeNames(t *testing.T) {
	for _, tc := range []struct {
		name, addr string
		seq        int64
		bad        bool
	}{
		{name: "10.0.0.5:8080-0000000003", addr: "10.0.0.5:8080", seq: 3},
		{name: "10.0.0.5:8080-0000001023", addr: "10.0.0.5:8080", seq: 1023},
		{name: "::1:8080-0000000000", addr: "::1:8080", seq: 0},
		{name: "a:1-0000000002-x", addr: "a:1", seq: 2},
		{name: "10.0.0.5:8080", bad: true},
		{name: "-0000000001", bad: true},
		{name: "10.0.0.5:8080-x", bad: true},
		{name: "10.0.0.5:8080-99999999999", bad: true},
	} {
		n, err := parseNodeName(tc.name)
		if tc.bad != (err != nil) || !tc.bad && (n.addr != tc.addr || n.seq != tc.seq || n.name != tc.name) {
			t.Errorf("parseNodeName(%q) = %+v, %v", tc.name, n, err)
		}
	}
	for _, a := range []string{"10.0.0.5", "host:8080", "10.0.0.5:0", "10.0.0.5:x", "[fe80::1%eth-0]:80"} {
		if _, _, err := checkAddr(a); err == nil {
			t.Errorf("checkAddr(%q) accepted", a)
		}
	}
	if ip, port, err := checkAddr("[::1]:8080"); err != nil || leafAddr(ip, port) != "::1:8080" {
		t.Errorf("checkAddr([::1]:8080) = %s, %s, %v; Leaf writes ::1:8080", ip, port, err)
	}
}

func TestParseURL(t *testing.T) {
	for _, tc := range []struct {
		url  string
		want Options
		err  string
	}{
		{url: "leafzk://zk1:2181,zk2/com.example.leaf?addr=10.0.0.5:8080",
			want: Options{Name: "com.example.leaf", Addr: "10.0.0.5:8080", Margin: DefaultMargin, Fresh: DefaultFresh}},
		{url: "leafzk://zk1/n?replace=10.0.0.9:8080&margin=20s&fresh=30s&dial_timeout=2s",
			want: Options{Name: "n", Replace: "10.0.0.9:8080", Margin: 20 * time.Second, Fresh: 30 * time.Second}},
		{url: "leafzk://zk1/n?addr=10.0.0.5:8080&probe_port=8081&probe_timeout=500ms",
			want: Options{Name: "n", Addr: "10.0.0.5:8080", Margin: DefaultMargin, Fresh: DefaultFresh, ProbePort: 8081, ProbeTimeout: 500 * time.Millisecond}},
		{url: "leafzk://zk1/n?addr=10.0.0.5:8080&probe=off",
			want: Options{Name: "n", Addr: "10.0.0.5:8080", Margin: DefaultMargin, Fresh: DefaultFresh, NoProbe: true}},
		{url: "leafzk://zk1/n?addr=10.0.0.5:8080&probe=no", err: "probe=on (the default) or probe=off"},
		{url: "leafzk://zk1/n?addr=10.0.0.5:8080&probe_port=0", err: "probe_port=0"},
		{url: "zk://zk1/n?addr=10.0.0.5:8080", err: "scheme must be leafzk"},
		{url: "leafzk://zk1?addr=10.0.0.5:8080", err: "leaf.name"},
		{url: "leafzk://zk1/a/b?addr=10.0.0.5:8080", err: "leaf.name"},
		{url: "leafzk://zk1/n", want: Options{Name: "n", Margin: DefaultMargin, Fresh: DefaultFresh}},
		{url: "leafzk://zk1/n?addr=10.0.0.5:8080&replace=10.0.0.6:8080", err: "not both"},
		{url: "leafzk://zk1/n?addr=leaf-1:8080", err: "not an ip:port"},
		{url: "leafzk://zk1/n?addr=10.0.0.5:8080&margin=1s", err: "margin 1s"},
		{url: "leafzk://zk1/n?addr=10.0.0.5:8080&fresh=3s", err: "fresh 3s"},
		{url: "leafzk://zk1/n?addr=10.0.0.5:8080&prefix=x", err: "unknown key prefix"},
		{url: "leafzk://ann:hunter2pw@zk1/n?addr=10.0.0.5:8080", err: "does not authenticate"},
		{url: "leafzk://zk1/bad%20name?addr=10.0.0.5:8080", err: "letters, digits"},
	} {
		o, err := ParseURL(tc.url)
		if tc.err != "" {
			if err == nil || !strings.Contains(err.Error(), tc.err) || strings.Contains(err.Error(), "hunter2pw") {
				t.Errorf("ParseURL(%q) = %v; want an error with %q (and no password)", tc.url, err, tc.err)
			}
			continue
		}
		if err != nil || o.Name != tc.want.Name || o.Addr != tc.want.Addr || o.Replace != tc.want.Replace || o.Margin != tc.want.Margin || o.Fresh != tc.want.Fresh ||
			o.ProbePort != tc.want.ProbePort || o.NoProbe != tc.want.NoProbe || tc.want.ProbeTimeout != 0 && o.ProbeTimeout != tc.want.ProbeTimeout {
			t.Errorf("ParseURL(%q) = %+v, %v; want %+v", tc.url, o, err, tc.want)
		}
	}
	o, _ := ParseURL("leafzk://zk1,zk2:2182/n?addr=10.0.0.5:8080")
	if strings.Join(o.ZK.Servers, ",") != "zk1:2181,zk2:2182" || o.ZK.DialTimeout != 5*time.Second {
		t.Errorf("servers %v, dial timeout %v", o.ZK.Servers, o.ZK.DialTimeout)
	}
}
