//go:build flurry_full

package leafzk

import (
	"bufio"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"io/fs"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/flurryid/flurry/lease"
	"github.com/flurryid/flurry/snowflake"
	"github.com/flurryid/flurry/verify/testenv"
)

// The jars Leaf's snowflake mode compiles and runs against: Debian's
// libcurator-framework-java, libcurator-client-java, libzookeeper-java,
// libjackson2-*-java, libguava-java, libcommons-io-java and libslf4j-java.
var leafJars = []string{
	"jackson-core.jar", "jackson-annotations.jar", "jackson-databind.jar",
	"curator-framework.jar", "curator-client.jar", "zookeeper.jar", "zookeeper-jute.jar",
	"guava.jar", "commons-io.jar", "slf4j-api.jar", "slf4j-simple.jar",
}

// faketimeLib is Debian's libfaketime (package libfaketime), which steps a Leaf
// server's clock.
const faketimeLib = "/usr/lib/x86_64-linux-gnu/faketime/libfaketimeMT.so.1"

// leafStartCPU bounds the start of a Leaf server in the CPU time its JVM spends,
// not in wall time: several JVMs start at once beside the other packages' tests on
// a loaded 2-core machine, and under libfaketime a start costs several times more
// (its clock calls contend on one lock and read the offset file each time). A start
// takes about 1 s of CPU, 7-13 s under libfaketime; a JVM that spends 60 s without
// serving is stuck, not slow. The wall time such a start takes grows with the load
// (2 minutes passed at a load of 15), so it is no bound.
const leafStartCPU = 60 * time.Second

// leafStartWall bounds in wall time the start of a Leaf server that spends little
// CPU time (it waits on a ZooKeeper that does not answer, say): far past any wait
// of Curator's own, and inside the package's test timeout.
const leafStartWall = 10 * time.Minute

// leafClasspath compiles Meituan Leaf's snowflake code (leaf-core from
// shared/compat: SnowflakeIDGenImpl, SnowflakeZookeeperHolder and what they use)
// and testdata/realleaf/LeafServer.java, which serves it over HTTP as
// leaf-server's controller does, and returns the classpath to run it with. The
// classes are kept under os.TempDir by the sources' hash, so that later runs do
// not compile again.
func leafClasspath(t *testing.T) string {
	t.Helper()
	testenv.Java(t)
	compat := testenv.CompatDir(t, "leaf/leaf-core/src/main/java/com/sankuai/inf/leaf/snowflake/SnowflakeZookeeperHolder.java")
	var jars []string
	for _, j := range leafJars {
		p := filepath.Join("/usr/share/java", j)
		if _, err := os.Stat(p); err != nil {
			skipOrFailLeaf(t, p+" not installed (Debian's libcurator-framework-java, libcurator-client-java, libzookeeper-java, libjackson2-databind-java, libguava-java, libcommons-io-java, libslf4j-java)")
		}
		jars = append(jars, p)
	}
	src := filepath.Join(compat, "leaf/leaf-core/src/main/java")
	var files []string
	filepath.WalkDir(src, func(p string, d fs.DirEntry, err error) error {
		if err == nil && !d.IsDir() && strings.HasSuffix(p, ".java") && !strings.Contains(p, string(filepath.Separator)+"segment"+string(filepath.Separator)) {
			files = append(files, p)
		}
		return nil
	})
	server, _ := filepath.Abs("testdata/realleaf/LeafServer.java")
	stub, _ := filepath.Abs("testdata/realleaf/stub/com/fasterxml/jackson/databind/ObjectMapper.java")
	files = append(files, server)
	slices.Sort(files)
	h := sha256.New()
	for _, f := range append(slices.Clone(files), stub) {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		fmt.Fprintf(h, "%s %d\n", filepath.Base(f), len(b))
		h.Write(b)
	}
	dir := filepath.Join(os.TempDir(), "flurry-realleaf-"+hex.EncodeToString(h.Sum(nil))[:16])
	classes := filepath.Join(dir, "classes")
	cp := strings.Join(append([]string{classes}, jars...), string(os.PathListSeparator))
	if _, err := os.Stat(filepath.Join(dir, "done")); err == nil {
		return cp
	}
	// Leaf's buildData does not catch the IOException that Debian's
	// jackson-databind declares on writeValueAsString: compile against a stub of
	// ObjectMapper with upstream Jackson's signatures, run on the real jar.
	stubDir := testenv.CompileJava(t, filepath.Join("/usr/share/java", "jackson-core.jar"), stub)
	built := testenv.CompileJava(t, strings.Join(append([]string{stubDir}, jars...), string(os.PathListSeparator)), files...)
	tmp, err := os.MkdirTemp(os.TempDir(), "flurry-realleaf-build")
	if err != nil {
		t.Fatal(err)
	}
	if err := os.CopyFS(filepath.Join(tmp, "classes"), os.DirFS(built)); err != nil {
		t.Fatal(err)
	}
	os.WriteFile(filepath.Join(tmp, "done"), nil, 0o644)
	if err := os.Rename(tmp, dir); err != nil {
		os.RemoveAll(tmp) // another run got there first
	}
	return cp
}

func skipOrFailLeaf(t testing.TB, msg string) {
	t.Helper()
	if testenv.Required() {
		t.Fatalf("%s; FLURRY_TEST_REQUIRE=1 makes this a failure", msg)
	}
	t.Skip(msg)
}

// A javaLeaf is a running Leaf snowflake server: a JVM running Leaf's own code.
type javaLeaf struct {
	t        *testing.T
	cmd      *exec.Cmd
	addr     string // the address it registered as: Utils.getIp():port
	http     string // where it serves: 127.0.0.1:httpPort
	worker   int64
	mu       sync.Mutex
	log      strings.Builder
	done     chan struct{}
	clockDir string // with faketime: the file whose offset its clock runs at
}

// leafRun says how to start a Leaf server.
type leafRun struct {
	cp, name, zk string
	// port is the port Leaf registers, 0 for the HTTP port; httpPort is where it
	// serves, 0 for any free port. startJavaLeaf fills both in.
	port, httpPort int
	tmp            string // java.io.tmpdir: where workerID.properties lives
	clock          string // a libfaketime offset ("-5"), or "" for the host's clock
}

// startJavaLeaf starts a Leaf server and waits until it serves. It fills in r's
// ports, so that r starts it again at the same address.
func startJavaLeaf(t *testing.T, r *leafRun) *javaLeaf {
	t.Helper()
	props := t.TempDir()
	if err := os.WriteFile(filepath.Join(props, "leaf.properties"), []byte("leaf.name="+r.name+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	_, java := testenv.Java(t)
	port := "http"
	if r.port != 0 {
		port = strconv.Itoa(r.port)
	}
	cmd := exec.Command(java, "-XX:TieredStopAtLevel=1", "-XX:+UseSerialGC", "-Xmx96m", "-Xss512k",
		"-Djava.io.tmpdir="+r.tmp, "-Djava.net.preferIPv4Stack=true",
		"-Dorg.slf4j.simpleLogger.log.org.apache=warn",
		"-cp", props+string(os.PathListSeparator)+r.cp, "LeafServer", r.zk, port, strconv.Itoa(r.httpPort))
	l := &javaLeaf{t: t, cmd: cmd, done: make(chan struct{})}
	cmd.Env = os.Environ()
	if r.clock != "" {
		if _, err := os.Stat(faketimeLib); err != nil {
			skipOrFailLeaf(t, faketimeLib+" not installed (Debian's libfaketime)")
		}
		l.clockDir = t.TempDir()
		l.setClock(r.clock)
		cmd.Env = append(cmd.Env, "LD_PRELOAD="+faketimeLib, "FAKETIME_TIMESTAMP_FILE="+filepath.Join(l.clockDir, "offset"),
			"FAKETIME_NO_CACHE=1", "FAKETIME_DONT_FAKE_MONOTONIC=1", "NO_FAKE_STAT=1")
	}
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	cmd.Stderr = cmd.Stdout
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(l.kill)
	ready := make(chan string, 1)
	go func() {
		defer close(l.done)
		sc := bufio.NewScanner(out)
		for sc.Scan() {
			line := sc.Text()
			l.mu.Lock()
			l.log.WriteString(line + "\n")
			l.mu.Unlock()
			if strings.HasPrefix(line, "LEAF READY ") {
				ready <- line
			}
		}
		cmd.Wait()
	}()
	bound := testenv.NewStartBound(cmd.Process.Pid, leafStartCPU, leafStartWall)
	tick := time.NewTicker(100 * time.Millisecond)
	defer tick.Stop()
	for {
		select {
		case line := <-ready:
			var ip string
			if _, err := fmt.Sscanf(line, "LEAF READY ip %s port %d http %d worker %d", &ip, &r.port, &r.httpPort, &l.worker); err != nil {
				t.Fatalf("Leaf server: %q: %v", line, err)
			}
			l.addr = ip + ":" + strconv.Itoa(r.port)
			l.http = "127.0.0.1:" + strconv.Itoa(r.httpPort)
			return l
		case <-l.done:
			t.Fatalf("the Leaf server exited:\n%s", l.output())
		case <-tick.C:
			if passed := bound.Passed(); passed != "" {
				t.Fatalf("the Leaf server did not start within %s:\n%s", passed, l.output())
			}
		}
	}
}

func (l *javaLeaf) output() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.log.String()
}

// setClock sets the Leaf server's clock to the host's plus offset (libfaketime's
// "+0", "-8": seconds), at once.
func (l *javaLeaf) setClock(offset string) {
	if err := os.WriteFile(filepath.Join(l.clockDir, "offset"), []byte(offset+"\n"), 0o644); err != nil {
		l.t.Fatal(err)
	}
}

// kill stops the JVM at once (kill -9).
func (l *javaLeaf) kill() {
	if l.cmd.Process != nil {
		l.cmd.Process.Kill()
	}
	<-l.done
}

// ids asks the server for n IDs (its get, n times) and returns those it issued.
func (l *javaLeaf) ids(n int) ([]int64, error) {
	res, err := http.Get("http://" + l.http + "/ids/" + strconv.Itoa(n))
	if err != nil {
		return nil, err
	}
	defer res.Body.Close()
	b, err := io.ReadAll(res.Body)
	if err != nil {
		return nil, err
	}
	var out []int64
	for line := range strings.Lines(string(b)) {
		line = strings.TrimSpace(line)
		if id, err := strconv.ParseInt(line, 10, 64); err == nil {
			out = append(out, id)
		}
	}
	return out, nil
}

// issueFor collects IDs from get until stop is closed, in small batches.
func issueFor(stop <-chan struct{}, get func() ([]int64, error)) []int64 {
	var out []int64
	for {
		select {
		case <-stop:
			return out
		default:
		}
		ids, err := get()
		if err == nil {
			out = append(out, ids...)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// dups counts the IDs of a that b has too.
func dups(a, b []int64) int {
	in := make(map[int64]struct{}, len(b))
	for _, id := range b {
		in[id] = struct{}{}
	}
	n := 0
	for _, id := range a {
		if _, ok := in[id]; ok {
			n++
		}
	}
	return n
}

func freePort(t testing.TB) int {
	t.Helper()
	ln, err := net.Listen("tcp", ":0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	return ln.Addr().(*net.TCPAddr).Port
}

// flurryIDs issues from g in batches of 100 until stop is closed.
func flurryIDs(g *snowflake.Generator) func() ([]int64, error) {
	return func() ([]int64, error) {
		ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
		defer cancel()
		out := make([]int64, 0, 100)
		for range 100 {
			id, err := g.Next(ctx)
			if err != nil {
				return out, err
			}
			out = append(out, int64(id))
		}
		return out, nil
	}
}

// realStore opens a store as flurry serve opens a leafzk:// URL, with the probe
// on, and fresh= and margin= at their shortest so that the test waits little.
func realStore(t *testing.T, servers []string, name string, set func(*Options)) *Store {
	return openStore(t, servers, name, func(o *Options) {
		o.Margin = minMargin
		probeOn(o)
		set(o)
	})
}

// startBeside starts flurry on st (waiting up to wait for a lease) and, if it
// starts, issues beside the Leaf server until stop is closed. It returns
// flurry's IDs and the start's error.
func startBeside(t *testing.T, st *Store, wait time.Duration, stop <-chan struct{}) ([]int64, error) {
	g, _, err := startFlurry(t, st, t.TempDir(), wait)
	if err != nil {
		return nil, err
	}
	return issueFor(stop, flurryIDs(g)), nil
}

// TestRealLeaf runs flurry against Meituan Leaf's own snowflake code (compiled
// from shared/compat with javac, on Debian's Curator and ZooKeeper jars, its
// clock stepped by libfaketime), in the three ways a Leaf server runs without
// writing its node, and in a mixed fleet. flurry never takes the worker ID of a
// Leaf server that runs, written or not.
func TestRealLeaf(t *testing.T) {
	servers := zkServers(t)
	cp := leafClasspath(t)
	zk := strings.Join(servers, ",")

	// Leaf started while ZooKeeper was unreachable runs on the worker ID of its
	// workerID.properties and never writes its node. Its HTTP port here differs
	// from the port it registers (probe_port=).
	t.Run("WorkerIDFile", func(t *testing.T) {
		t.Parallel()
		name := leafName(t)
		// Leaf registers a port it does not serve on.
		run := leafRun{cp: cp, name: name, zk: zk, port: freePort(t), tmp: t.TempDir()}
		first := startJavaLeaf(t, &run)
		before, err := first.ids(200)
		if err != nil || len(before) == 0 {
			t.Fatalf("the Leaf server's IDs: %v, %v", before, err)
		}
		first.kill()
		run.zk = "127.0.0.1:" + strconv.Itoa(freePort(t)) // ZooKeeper unreachable
		silent := startJavaLeaf(t, &run)
		if !strings.Contains(silent.output(), "START FAILED ,use local node file properties workerID-"+strconv.FormatInt(first.worker, 10)) || silent.worker != first.worker {
			t.Fatalf("the Leaf server started without ZooKeeper did not fall back to its workerID.properties (worker %d):\n%s", silent.worker, silent.output())
		}
		st := realStore(t, servers, name, func(o *Options) { o.Replace = first.addr; probePort(o, run.httpPort) })
		stop := make(chan struct{})
		var leafIDs, flurry []int64
		var startErr error
		var wg sync.WaitGroup
		wg.Go(func() { leafIDs = issueFor(stop, func() ([]int64, error) { return silent.ids(100) }) })
		wg.Go(func() { flurry, startErr = startBeside(t, st, 2*minFresh, stop) })
		time.Sleep(2*minFresh + time.Second)
		close(stop)
		wg.Wait()
		if n := dups(flurry, leafIDs); n > 0 || startErr == nil {
			t.Fatalf("flurry took worker %d of the Leaf server running on its workerID.properties (start error %v): %d duplicate IDs in %d of flurry's and %d of Leaf's",
				first.worker, startErr, n, len(flurry), len(leafIDs))
		}
		if !strings.Contains(startErr.Error(), "a server runs at "+strings.Split(first.addr, ":")[0]+":"+strconv.Itoa(run.httpPort)) {
			t.Fatalf("flurry's start beside the Leaf server: %v; want the server named", startErr)
		}
		silent.kill()
		g, s, err := startFlurry(t, st, t.TempDir(), 3*minFresh)
		if err != nil {
			t.Fatalf("the Leaf server stopped, and flurry did not take its worker ID: %v", err)
		}
		after := issue(t, g, s, 2000)
		checkUnique(t, map[string][]int64{"Leaf": before, "Leaf on its file": leafIDs, "flurry after": after})
	})

	// Leaf whose start check failed (its clock behind the timestamp flurry
	// left) logs START FAILED, runs on its workerID.properties, and never writes;
	// flurry wrote the node last.
	t.Run("StartCheckFailed", func(t *testing.T) {
		t.Parallel()
		name := leafName(t)
		run := leafRun{cp: cp, name: name, zk: zk, tmp: t.TempDir()}
		first := startJavaLeaf(t, &run)
		before, err := first.ids(200)
		if err != nil {
			t.Fatal(err)
		}
		first.kill()
		// flurry takes the node over, and stops cleanly: the node's timestamp is
		// flurry's last ID's.
		st1 := realStore(t, servers, name, func(o *Options) { o.Replace = first.addr })
		g1, s1, err := startFlurry(t, st1, t.TempDir(), 4*minFresh)
		if err != nil {
			t.Fatal(err)
		}
		waitFor(t, "flurry's first write of the node", func() bool {
			_, stat := nodeTimestamp(t, st1.conn, st1.forever, first.addr)
			return stat.Version > 1
		})
		byFlurry := issue(t, g1, s1, 2000)
		if err := s1.Close(); err != nil {
			t.Fatal(err)
		}
		g1.Close()
		// The Leaf host's clock is ten minutes behind when Leaf starts (a host just
		// booted, before NTP has set its clock), then stepped to the right time.
		// Far enough behind that a slow start (a JVM on a loaded machine can take a
		// minute) still finds flurry's last timestamp ahead of its clock.
		run.clock = "-600"
		back := startJavaLeaf(t, &run)
		back.setClock("+0")
		if !strings.Contains(back.output(), "START FAILED ,use local node file properties workerID-") || back.worker != first.worker {
			t.Fatalf("the Leaf server with its clock behind flurry's last timestamp passed its start check (worker %d):\n%s", back.worker, back.output())
		}
		st2 := realStore(t, servers, name, func(o *Options) { o.Replace = first.addr })
		stop := make(chan struct{})
		var leafIDs, flurry []int64
		var startErr error
		var wg sync.WaitGroup
		wg.Go(func() { leafIDs = issueFor(stop, func() ([]int64, error) { return back.ids(100) }) })
		wg.Go(func() { flurry, startErr = startBeside(t, st2, 2*minFresh, stop) })
		time.Sleep(2*minFresh + time.Second)
		close(stop)
		wg.Wait()
		if n := dups(flurry, leafIDs); n > 0 || startErr == nil {
			t.Fatalf("a second flurry server took worker %d of the Leaf server whose start check failed (start error %v): %d duplicate IDs in %d of flurry's and %d of Leaf's",
				first.worker, startErr, n, len(flurry), len(leafIDs))
		}
		back.kill()
		g2, s2, err := startFlurry(t, st2, t.TempDir(), 3*minFresh)
		if err != nil {
			t.Fatalf("the Leaf server stopped, and flurry did not take its worker ID: %v", err)
		}
		after := issue(t, g2, s2, 2000)
		checkUnique(t, map[string][]int64{"Leaf": before, "flurry": byFlurry, "flurry after": after})
		checkUnique(t, map[string][]int64{"Leaf after its failed check": leafIDs, "flurry after": after})
	})

	// A live Leaf server whose clock stepped back skips its writes while its
	// clock is behind its last write (8 s here against fresh= 5s; 20 s against
	// the default 10 s in the field).
	t.Run("ClockSteppedBack", func(t *testing.T) {
		t.Parallel()
		name := leafName(t)
		run := leafRun{cp: cp, name: name, zk: zk, tmp: t.TempDir(), clock: "+0"}
		leaf := startJavaLeaf(t, &run)
		st := realStore(t, servers, name, func(o *Options) { o.Replace = leaf.addr })
		waitFor(t, "the Leaf server's first write", func() bool {
			_, stat := nodeTimestamp(t, st.conn, st.forever, leaf.addr)
			return stat.Version > 0
		})
		stop := make(chan struct{})
		var leafIDs, flurry []int64
		var startErr error
		var wg sync.WaitGroup
		wg.Go(func() { leafIDs = issueFor(stop, func() ([]int64, error) { return leaf.ids(100) }) })
		time.Sleep(time.Second)
		leaf.setClock("-8")
		wg.Go(func() { flurry, startErr = startBeside(t, st, 9*time.Second, stop) })
		// Leaf writes again once its clock is past its last write (8 s), flurry
		// loses the worker at its next renewal; Leaf's IDs reach the
		// milliseconds flurry issued 8 s later.
		time.Sleep(20 * time.Second)
		close(stop)
		wg.Wait()
		if n := dups(flurry, leafIDs); n > 0 || startErr == nil {
			t.Fatalf("flurry took worker %d of the Leaf server whose clock stepped back (start error %v): %d duplicate IDs in %d of flurry's and %d of Leaf's",
				leaf.worker, startErr, n, len(flurry), len(leafIDs))
		}
	})

	// Two Leaf servers and two flurry servers in one registry, issuing at once.
	t.Run("Mixed", func(t *testing.T) {
		t.Parallel()
		name := leafName(t)
		var leaves []*javaLeaf
		for range 2 {
			run := leafRun{cp: cp, name: name, zk: zk, tmp: t.TempDir()}
			leaves = append(leaves, startJavaLeaf(t, &run))
		}
		ip := strings.Split(leaves[0].addr, ":")[0]
		var gens []*snowflake.Generator
		var sessions []*lease.Session
		for range 2 {
			port := freePort(t)
			st := realStore(t, servers, name, func(o *Options) { o.Addr = ip + ":" + strconv.Itoa(port) })
			g, s, err := startFlurry(t, st, t.TempDir(), 30*time.Second)
			if err != nil {
				t.Fatal(err)
			}
			gens, sessions = append(gens, g), append(sessions, s)
		}
		// A third flurry server asked to take over a running Leaf server's node
		// is refused.
		st := realStore(t, servers, name, func(o *Options) { o.Replace = leaves[1].addr })
		if _, _, err := startFlurry(t, st, t.TempDir(), minFresh+2*time.Second); err == nil {
			t.Fatalf("flurry took over the node of the running Leaf server at %s", leaves[1].addr)
		}
		sets := map[string][]int64{}
		var mu sync.Mutex
		var wg sync.WaitGroup
		for i, l := range leaves {
			wg.Go(func() {
				var ids []int64
				for range 5 {
					b, err := l.ids(5000)
					if err != nil {
						t.Error(err)
						return
					}
					ids = append(ids, b...)
				}
				mu.Lock()
				sets[fmt.Sprintf("Leaf server %d", i+1)] = ids
				mu.Unlock()
			})
		}
		for i, g := range gens {
			wg.Go(func() {
				ids := issue(t, g, sessions[i], 25000)
				mu.Lock()
				sets[fmt.Sprintf("flurry server %d", i+1)] = ids
				mu.Unlock()
			})
		}
		wg.Wait()
		workers := map[int64]string{}
		total := 0
		for who, ids := range sets {
			total += len(ids)
			w := workerOf(ids[0])
			if prev, ok := workers[w]; ok {
				t.Fatalf("%s and %s share worker %d", prev, who, w)
			}
			workers[w] = who
		}
		if len(workers) != 4 || total < 95000 {
			t.Fatalf("%d IDs of workers %v; want about 100,000 of four", total, workers)
		}
		checkUnique(t, sets)
	})
}
