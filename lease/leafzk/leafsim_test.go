package leafzk

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math/rand/v2"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/go-zookeeper/zk"

	"github.com/flurryid/flurry/internal/zkconn"
)

// leafServer is a Meituan Leaf snowflake server as its source has it, for tests:
// SnowflakeZookeeperHolder (the registry: init, createNode, checkInitTimeStamp,
// ScheduledUploadData, updateNewData, buildData/deBuildData) and
// SnowflakeIDGenImpl.get (the IDs), written here from what that source does, on
// the real ZooKeeper. Its clock (System.currentTimeMillis) is now, so that a test
// can say what the server's clock read.
type leafServer struct {
	t        testing.TB
	conn     *zkconn.Conn
	forever  string // /snowflake/{leaf.name}/forever
	ip, port string
	now      func() int64

	workerID int64
	node     string // the full path of its node: zk_AddressNode

	mu            sync.Mutex
	lastUpdate    int64 // lastUpdateTime
	lastTimestamp int64
	sequence      int64
	rnd           *rand.Rand

	stop chan struct{}
	done chan struct{}
}

// leafEpoch is SnowflakeIDGenImpl's default twepoch.
const leafEpoch = 1288834974657

// errCheckInitTimeStamp is SnowflakeZookeeperHolder's CheckLastTimeException:
// "init timestamp check error,forever node timestamp gt this node time".
var errCheckInitTimeStamp = errors.New("leaf: init timestamp check error, forever node timestamp gt this node time")

// newLeaf connects a Leaf server of leaf.name name at addr (ip:port) to the
// ensemble servers. Call init to start it.
func newLeaf(t testing.TB, servers []string, name, addr string, now func() int64) *leafServer {
	t.Helper()
	c, err := zkconn.Open(context.Background(), zkconn.Options{Servers: servers, Prefix: "snowflake/" + name}, zkconn.Kind{Package: "leaf", DefaultPrefix: "snowflake"})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	i := strings.LastIndexByte(addr, ':')
	if now == nil {
		now = func() int64 { return time.Now().UnixMilli() }
	}
	return &leafServer{t: t, conn: c, forever: c.Prefix + "/forever", ip: addr[:i], port: addr[i+1:], now: now,
		rnd: rand.New(rand.NewPCG(rand.Uint64(), rand.Uint64()))}
}

func (l *leafServer) listenAddress() string { return l.ip + ":" + l.port }

// buildData is Jackson's writing of Endpoint(ip, port, System.currentTimeMillis()).
func (l *leafServer) buildData() []byte {
	b, _ := json.Marshal(struct {
		IP        string `json:"ip"`
		Port      string `json:"port"`
		Timestamp int64  `json:"timestamp"`
	}{l.ip, l.port, l.now()})
	return b
}

// deBuildData is Jackson's reading of Endpoint with Leaf's ObjectMapper, which
// fails on a property Endpoint does not have.
func deBuildData(data []byte) (ip, port string, ts int64, err error) {
	d := json.NewDecoder(strings.NewReader(string(data)))
	d.DisallowUnknownFields()
	var e struct {
		IP        string `json:"ip"`
		Port      string `json:"port"`
		Timestamp int64  `json:"timestamp"`
	}
	if err := d.Decode(&e); err != nil {
		return "", "", 0, fmt.Errorf("leaf: deBuildData: %v", err)
	}
	return e.IP, e.Port, e.Timestamp, nil
}

// createNode creates the persistent sequential node forever/{ip}:{port}- with
// the server's Endpoint, its parents if needed (creatingParentsIfNeeded).
func (l *leafServer) createNode(ctx context.Context) (string, error) {
	p, err := l.conn.Create(ctx, l.forever+"/"+l.listenAddress()+"-", l.buildData(), zk.FlagSequence)
	if errors.Is(err, zk.ErrNoNode) {
		if err := l.conn.CreatePath(ctx, l.forever); err != nil {
			return "", err
		}
		p, err = l.conn.Create(ctx, l.forever+"/"+l.listenAddress()+"-", l.buildData(), zk.FlagSequence)
	}
	return p, err
}

// init is SnowflakeZookeeperHolder.init without its fall-back to
// workerID.properties (a test wants to see the failure): on a first start of the
// registry, create the node and keep worker ID 0; else find the node of this
// address (the last of the children with it, as Leaf's HashMap keeps it), check
// its timestamp, or create a node and take its number. It starts the uploads.
func (l *leafServer) init(ctx context.Context) error {
	ok, _, err := l.conn.Exists(ctx, l.forever)
	if err != nil {
		return err
	}
	if !ok {
		if l.node, err = l.createNode(ctx); err != nil {
			return err
		}
		l.workerID = 0 // Leaf keeps the field's default here
		l.scheduleUploads()
		return nil
	}
	keys, err := l.conn.Children(ctx, l.forever)
	if err != nil {
		return err
	}
	nodeMap, realNode := map[string]int64{}, map[string]string{}
	for _, key := range keys {
		parts := strings.Split(key, "-")
		if len(parts) < 2 {
			return fmt.Errorf("leaf: ArrayIndexOutOfBoundsException on node %q", key)
		}
		n, err := strconv.ParseInt(parts[1], 10, 32)
		if err != nil {
			return fmt.Errorf("leaf: NumberFormatException on node %q", key)
		}
		realNode[parts[0]], nodeMap[parts[0]] = key, n
	}
	if w, ok := nodeMap[l.listenAddress()]; ok {
		l.node, l.workerID = l.forever+"/"+realNode[l.listenAddress()], w
		if err := l.checkInitTimeStamp(ctx); err != nil {
			return err
		}
		l.scheduleUploads()
		return nil
	}
	p, err := l.createNode(ctx)
	if err != nil {
		return err
	}
	l.node = p
	w, err := strconv.ParseInt(strings.Split(p, "-")[1], 10, 32)
	if err != nil {
		return err
	}
	l.workerID = w
	l.scheduleUploads()
	return nil
}

// checkInitTimeStamp: the node's timestamp must not be ahead of the clock.
func (l *leafServer) checkInitTimeStamp(ctx context.Context) error {
	data, _, err := l.conn.Get(ctx, l.node)
	if err != nil {
		return err
	}
	_, _, ts, err := deBuildData(data)
	if err != nil {
		return err
	}
	if ts > l.now() {
		return fmt.Errorf("%w: node %d ms ahead", errCheckInitTimeStamp, ts-l.now())
	}
	return nil
}

// scheduleUploads runs updateNewData 1 s after the start, then 3 s after the end
// of each run (scheduleWithFixedDelay(..., 1L, 3L, TimeUnit.SECONDS)), until stop.
func (l *leafServer) scheduleUploads() {
	l.stop, l.done = make(chan struct{}), make(chan struct{})
	go func() {
		defer close(l.done)
		wait := time.Second
		for {
			select {
			case <-l.stop:
				return
			case <-time.After(wait):
			}
			l.updateNewData()
			wait = leafInterval
		}
	}()
	l.t.Cleanup(l.halt)
}

// updateNewData writes the node's Endpoint unless the clock is behind the last
// write; a failed write is logged and forgotten.
func (l *leafServer) updateNewData() {
	l.mu.Lock()
	last := l.lastUpdate
	l.mu.Unlock()
	if l.now() < last {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if _, err := l.conn.Set(ctx, l.node, l.buildData(), -1); err != nil {
		return
	}
	l.mu.Lock()
	l.lastUpdate = l.now()
	l.mu.Unlock()
}

// halt stops the uploads: the server is stopped (or dead).
func (l *leafServer) halt() {
	if l.stop == nil {
		return
	}
	select {
	case <-l.stop:
	default:
		close(l.stop)
	}
	<-l.done
}

// get is SnowflakeIDGenImpl.get: the clock behind by up to 5 ms is waited for,
// more is an error; a new millisecond starts its sequence at RANDOM.nextInt(100),
// and a sequence that wraps waits for the next millisecond.
func (l *leafServer) get() (int64, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	ts := l.now()
	if ts < l.lastTimestamp {
		offset := l.lastTimestamp - ts
		if offset > 5 {
			return 0, fmt.Errorf("leaf: Result{id=-3, status=EXCEPTION}: clock %d ms behind", offset)
		}
		time.Sleep(time.Duration(offset<<1) * time.Millisecond)
		if ts = l.now(); ts < l.lastTimestamp {
			return 0, errors.New("leaf: Result{id=-1, status=EXCEPTION}")
		}
	}
	if l.lastTimestamp == ts {
		l.sequence = (l.sequence + 1) & 4095
		if l.sequence == 0 {
			l.sequence = l.rnd.Int64N(100)
			for ts <= l.lastTimestamp {
				ts = l.now()
			}
		}
	} else {
		l.sequence = l.rnd.Int64N(100)
	}
	l.lastTimestamp = ts
	return (ts-leafEpoch)<<22 | l.workerID<<12 | l.sequence, nil
}

// nodeTimestamp reads the timestamp of the node of addr in the registry, as Leaf
// would deBuildData it.
func nodeTimestamp(t testing.TB, c *zkconn.Conn, forever, addr string) (int64, *zk.Stat) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	keys, err := c.Children(ctx, forever)
	if err != nil {
		t.Fatal(err)
	}
	for _, k := range keys {
		if strings.Split(k, "-")[0] == addr {
			data, st, err := c.Get(ctx, forever+"/"+k)
			if err != nil {
				t.Fatal(err)
			}
			_, _, ts, err := deBuildData(data)
			if err != nil {
				t.Fatalf("%s: %v", k, err)
			}
			return ts, st
		}
	}
	t.Fatalf("no node of %s in %s (%v)", addr, forever, keys)
	return 0, nil
}
