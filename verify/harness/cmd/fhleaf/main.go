// Command fhleaf stands in for a Meituan Leaf snowflake server that registered
// with ZooKeeper and then stopped writing its node while it still answers: the
// fault harness's silent-leaf kind runs it (real Leaf servers are tested against
// flurry elsewhere).
//
//	fhleaf -zk host:port,... -name {leaf.name} -addr ip:port [-writes N]
//
// As Leaf does at its start, it finds or creates the persistent sequential node
// /snowflake/{leaf.name}/forever/{ip}:{port}-NNNNNNNNNN, whose number is its
// worker ID, with data {"ip":...,"port":...,"timestamp":...}; it then rewrites the
// timestamp every 3 s only -writes times (0: never, as a Leaf server running on its
// workerID.properties fallback, one whose start check failed, or one whose clock
// stepped back behind its last write) and serves, on addr:
//
//	GET /api/snowflake/get/{key}              one ID, text/plain (Leaf's route)
//	GET /v1/{ns}/next?count=N&format=text     N IDs, one a line (the harness workload's route)
//
// IDs are Leaf's: 41 bits of milliseconds from Twitter's epoch, 10 worker bits, 12
// sequence bits, each millisecond's sequence starting at a random value below 100.
// SIGTERM or SIGINT stops it.
package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"math/rand/v2"
	"net"
	"net/http"
	"os"
	"os/signal"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/go-zookeeper/zk"
)

// Leaf's layout.
const (
	twepoch    = 1288834974657 // ms, Twitter's epoch
	workerBits = 10
	seqBits    = 12
	seqMask    = 1<<seqBits - 1
	randBelow  = 100
	maxCount   = 100_000
)

func main() {
	servers := flag.String("zk", "", "ZooKeeper servers, host:port,host:port")
	name := flag.String("name", "", "leaf.name: the registry is /snowflake/{leaf.name}/forever")
	addr := flag.String("addr", "", "ip:port to register and to listen on")
	writes := flag.Int("writes", 0, "timestamp writes after registering, one every 3 s (0: none)")
	flag.Parse()
	if *servers == "" || *name == "" || *addr == "" {
		fmt.Fprintln(os.Stderr, "fhleaf: -zk, -name and -addr are required")
		os.Exit(2)
	}
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM, syscall.SIGINT)
	defer stop()
	if err := run(ctx, strings.Split(*servers, ","), *name, *addr, *writes); err != nil {
		fmt.Fprintln(os.Stderr, "fhleaf:", err)
		os.Exit(1)
	}
}

func run(ctx context.Context, servers []string, name, addr string, writes int) error {
	ip, port, err := net.SplitHostPort(addr)
	if err != nil {
		return fmt.Errorf("-addr: %w", err)
	}
	conn, _, err := zk.Connect(servers, 10*time.Second, zk.WithLogInfo(false))
	if err != nil {
		return fmt.Errorf("zookeeper: %w", err)
	}
	data := func() []byte {
		b, _ := json.Marshal(struct {
			IP        string `json:"ip"`
			Port      string `json:"port"`
			Timestamp int64  `json:"timestamp"`
		}{ip, port, time.Now().UnixMilli()})
		return b
	}
	node, worker, err := register(conn, "/snowflake/"+name+"/forever", addr, data())
	if err != nil {
		conn.Close()
		return err
	}
	fmt.Printf("fhleaf: registered %s as worker ID %d; %d timestamp writes, then none\n", node, worker, writes)
	go func() {
		defer conn.Close()
		for i := 0; i < writes; i++ {
			select {
			case <-ctx.Done():
				return
			case <-time.After(3 * time.Second):
			}
			if _, err := conn.Set(node, data(), -1); err != nil {
				fmt.Println("fhleaf: write of the node's timestamp:", err)
			}
		}
	}()

	g := &gen{worker: int64(worker)}
	mux := http.NewServeMux()
	mux.HandleFunc("GET /api/snowflake/get/{key}", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/plain;charset=UTF-8")
		fmt.Fprint(w, g.next(1)[0])
	})
	mux.HandleFunc("GET /v1/{ns}/next", func(w http.ResponseWriter, r *http.Request) {
		n, err := strconv.Atoi(r.URL.Query().Get("count"))
		if err != nil || n < 1 || n > maxCount {
			http.Error(w, "count: 1 to 100000", http.StatusBadRequest)
			return
		}
		var b []byte
		for _, id := range g.next(n) {
			b = strconv.AppendInt(b, id, 10)
			b = append(b, '\n')
		}
		w.Header().Set("Content-Type", "text/plain")
		_, _ = w.Write(b)
	})
	srv := &http.Server{Addr: addr, Handler: mux, ReadHeaderTimeout: 5 * time.Second}
	go func() {
		<-ctx.Done()
		sctx, cancel := context.WithTimeout(context.Background(), 3*time.Second)
		defer cancel()
		_ = srv.Shutdown(sctx)
	}()
	if err := srv.ListenAndServe(); err != nil && !errors.Is(err, http.ErrServerClosed) {
		return err
	}
	return nil
}

// register finds the node of addr under forever or creates it (persistent,
// sequential), as Leaf's SnowflakeZookeeperHolder does, and returns its path and
// number.
func register(conn *zk.Conn, forever, addr string, data []byte) (string, int, error) {
	keys, _, err := conn.Children(forever)
	if err != nil && !errors.Is(err, zk.ErrNoNode) {
		return "", 0, fmt.Errorf("zookeeper: children of %s: %w", forever, err)
	}
	for _, k := range keys {
		if a, num, ok := strings.Cut(k, "-"); ok && a == addr {
			w, err := strconv.Atoi(num)
			if err != nil {
				return "", 0, fmt.Errorf("zookeeper: node %s/%s: %w", forever, k, err)
			}
			return forever + "/" + k, w, nil
		}
	}
	p := ""
	for _, part := range strings.Split(strings.TrimPrefix(forever, "/"), "/") {
		p += "/" + part
		if _, err := conn.Create(p, nil, 0, zk.WorldACL(zk.PermAll)); err != nil && !errors.Is(err, zk.ErrNodeExists) {
			return "", 0, fmt.Errorf("zookeeper: create %s: %w", p, err)
		}
	}
	path, err := conn.Create(forever+"/"+addr+"-", data, zk.FlagSequence, zk.WorldACL(zk.PermAll))
	if err != nil {
		return "", 0, fmt.Errorf("zookeeper: create the node of %s: %w", addr, err)
	}
	w, err := strconv.Atoi(path[strings.LastIndexByte(path, '-')+1:])
	if err != nil {
		return "", 0, fmt.Errorf("zookeeper: node %s: %w", path, err)
	}
	if w >= 1<<workerBits {
		return "", 0, fmt.Errorf("zookeeper: node %s: worker ID %d does not fit %d bits", path, w, workerBits)
	}
	return path, w, nil
}

// gen is Leaf's SnowflakeIDGenImpl, without its refusal of a clock step back
// (this stand-in's clock does not step).
type gen struct {
	mu     sync.Mutex
	worker int64
	last   int64 // ms of the last ID
	seq    int64
}

func (g *gen) next(n int) []int64 {
	g.mu.Lock()
	defer g.mu.Unlock()
	out := make([]int64, 0, n)
	for len(out) < n {
		now := time.Now().UnixMilli()
		switch {
		case now < g.last:
			time.Sleep(time.Duration(g.last-now) * time.Millisecond)
			continue
		case now == g.last:
			g.seq = (g.seq + 1) & seqMask
			if g.seq == 0 {
				for now <= g.last {
					time.Sleep(100 * time.Microsecond)
					now = time.Now().UnixMilli()
				}
				g.last, g.seq = now, rand.Int64N(randBelow)
			}
		default:
			g.last, g.seq = now, rand.Int64N(randBelow)
		}
		out = append(out, (g.last-twepoch)<<(workerBits+seqBits)|g.worker<<seqBits|g.seq)
	}
	return out
}
