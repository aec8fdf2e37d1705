package leafzk

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"strconv"
	"strings"
)

// Leaf's registry, as Meituan Leaf's SnowflakeZookeeperHolder keeps it:
//
//	/snowflake/{leaf.name}/forever/{ip}:{port}-{sequence}
//
// one persistent sequential node per server address, created the first time a
// server starts at that address and never deleted. ZooKeeper numbers the nodes of
// a parent 0000000000, 0000000001, ...; the number is the server's worker ID.
// The node's data is the JSON of Leaf's Endpoint, written by Jackson:
//
//	{"ip":"10.0.0.5","port":"8080","timestamp":1700000000000}
//
// with the server's clock (System.currentTimeMillis) at each write: at creation,
// then every 3 s while the server runs. A restarting server finds its node by
// ip:port (the part before the first "-", the number after it) and refuses to
// start when the node's timestamp is ahead of its clock.

// leafWorkerBits is the width of Leaf's worker ID field: a node numbered 1024 or
// more cannot be used.
const leafWorkerBits = 10

// leafNode is one child of the forever node, by its name.
type leafNode struct {
	name string // "10.0.0.5:8080-0000000003"
	addr string // "10.0.0.5:8080"
	seq  int64  // 3: the worker ID
}

// parseNodeName reads a child of the forever node as Leaf does
// (key.split("-"): the address before the first "-", the number after it).
func parseNodeName(name string) (leafNode, error) {
	addr, rest, ok := strings.Cut(name, "-")
	if !ok || addr == "" {
		return leafNode{}, fmt.Errorf("node %q is not Leaf's {ip}:{port}-{number}", name)
	}
	num, _, _ := strings.Cut(rest, "-")
	seq, err := strconv.ParseInt(num, 10, 32) // Leaf: Integer.parseInt
	if err != nil || seq < 0 {
		return leafNode{}, fmt.Errorf("node %q is not Leaf's {ip}:{port}-{number}", name)
	}
	return leafNode{name: name, addr: addr, seq: seq}, nil
}

// endpoint is the data of a Leaf node: Leaf's Endpoint class.
type endpoint struct {
	IP        string
	Port      string
	Timestamp int64 // Unix milliseconds, by the writer's clock
}

// marshal writes the endpoint as Jackson writes Leaf's Endpoint: the fields in
// their declared order, the port as a string, and nothing else, since Leaf reads
// the node back with an ObjectMapper that fails on any field it does not know.
func (e endpoint) marshal() []byte {
	b := []byte(`{"ip":`)
	b = appendJSONString(b, e.IP)
	b = append(b, `,"port":`...)
	b = appendJSONString(b, e.Port)
	b = append(b, `,"timestamp":`...)
	b = strconv.AppendInt(b, e.Timestamp, 10)
	return append(b, '}')
}

// appendJSONString appends s as a JSON string, without escaping <, > and &, as
// Jackson writes it.
func appendJSONString(b []byte, s string) []byte {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	enc.Encode(s) // a string always encodes
	return append(b, bytes.TrimSuffix(buf.Bytes(), []byte("\n"))...)
}

// parseEndpoint reads a Leaf node's data. It accepts what Jackson would read into
// Leaf's Endpoint: a string or a number for each field (Jackson coerces both
// ways), fields in any order. A field Leaf does not know is an error, as it is to
// Leaf.
func parseEndpoint(data []byte) (endpoint, error) {
	var raw map[string]json.RawMessage
	d := json.NewDecoder(bytes.NewReader(data))
	d.UseNumber()
	if err := d.Decode(&raw); err != nil || raw == nil {
		return endpoint{}, errors.New(`its data is not Leaf's {"ip":...,"port":...,"timestamp":...}`)
	}
	var e endpoint
	for k, v := range raw {
		var err error
		switch k {
		case "ip":
			e.IP, err = jsonText(v)
		case "port":
			e.Port, err = jsonText(v)
		case "timestamp":
			var s string
			if s, err = jsonText(v); err == nil {
				e.Timestamp, err = strconv.ParseInt(s, 10, 64)
			}
		default:
			err = fmt.Errorf("field %q, which Leaf does not know", k)
		}
		if err != nil {
			return endpoint{}, fmt.Errorf(`its data is not Leaf's {"ip":...,"port":...,"timestamp":...}: %v`, err)
		}
	}
	if _, ok := raw["timestamp"]; !ok {
		return endpoint{}, errors.New(`its data has no "timestamp"`)
	}
	return e, nil
}

// jsonText returns a JSON string's text, or a number's digits.
func jsonText(v json.RawMessage) (string, error) {
	var s string
	if err := json.Unmarshal(v, &s); err == nil {
		return s, nil
	}
	var n json.Number
	d := json.NewDecoder(bytes.NewReader(v))
	d.UseNumber()
	if err := d.Decode(&n); err != nil {
		return "", fmt.Errorf("%s is neither a string nor a number", v)
	}
	return n.String(), nil
}

// checkAddr checks an ip:port as Leaf names its nodes: an IP address (Leaf's
// Utils.getIp gives one, never a host name) and a port, and no "-", which would
// cut Leaf's parse of the node's name.
func checkAddr(addr string) (ip, port string, err error) {
	ip, port, err = net.SplitHostPort(addr)
	if err != nil || net.ParseIP(ip) == nil || strings.Contains(addr, "-") {
		return "", "", fmt.Errorf("%q is not an ip:port as Leaf registers its servers (10.0.0.5:8080)", addr)
	}
	if p, err := strconv.Atoi(port); err != nil || p < 1 || p > 65535 {
		return "", "", fmt.Errorf("%q: the port must be from 1 to 65535", addr)
	}
	return ip, port, nil
}

// leafAddr writes ip:port as Leaf does (ip + ":" + port): no brackets, even for an
// IPv6 address.
func leafAddr(ip, port string) string { return ip + ":" + port }
