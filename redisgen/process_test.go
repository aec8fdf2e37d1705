package redisgen

import (
	"bufio"
	"bytes"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/flurryid/flurry"
	"github.com/flurryid/flurry/layout"
	"github.com/flurryid/flurry/verify/testenv"
)

// helperEnv names the namespace a helper process issues in; see TestHelperIssue.
const helperEnv = "FLURRY_REDISGEN_HELPER"

// TestHelperIssue is not a test: TestProcesses runs the test binary with helperEnv
// set, and this function then issues IDs in that namespace and prints them.
func TestHelperIssue(t *testing.T) {
	ns := os.Getenv(helperEnv)
	if ns == "" {
		t.Skip("helper process of another test: runs only when TestProcesses starts it")
	}
	n, _ := strconv.Atoi(os.Getenv(helperEnv + "_N"))
	g := newGen(t, Options{URL: testenv.Redis.URL(t), Namespace: ns, Layout: mustLayout(t, "twitter")})
	ctx := testCtx(t)
	w := bufio.NewWriter(os.Stdout)
	defer w.Flush()
	buf := make([]flurry.ID, 97)
	for done := 0; done < n; {
		k, err := g.NextN(ctx, buf[:min(len(buf), n-done)])
		if err != nil {
			t.Fatal(err)
		}
		for _, id := range buf[:k] {
			fmt.Fprintln(w, "id", id)
		}
		done += k
	}
}

// TestProcesses runs four OS processes and two in-process generators with clients
// of their own on one namespace at once: no ID may come twice.
func TestProcesses(t *testing.T) {
	if os.Getenv(helperEnv) != "" {
		t.Skip("in a helper process")
	}
	c := newClient(t)
	l := mustLayout(t, "twitter")
	ns := freshNamespace(t, c)
	g := newGen(t, Options{Client: c, Namespace: ns, Layout: l})
	if err := g.SetNode(testCtx(t), layout.NodeValues{5, 6}); err != nil {
		t.Fatal(err)
	}
	const procs, perProc = 4, 20000
	var (
		mu   sync.Mutex
		all  [][]flurry.ID
		wg   sync.WaitGroup
		errs = make(chan error, procs+2)
	)
	for p := range procs {
		wg.Go(func() {
			cmd := exec.Command(os.Args[0], "-test.run=^TestHelperIssue$", "-test.count=1")
			cmd.Env = append(os.Environ(), helperEnv+"="+ns, helperEnv+"_N="+strconv.Itoa(perProc))
			var out, stderr bytes.Buffer
			cmd.Stdout, cmd.Stderr = &out, &stderr
			if err := cmd.Run(); err != nil {
				errs <- fmt.Errorf("process %d: %v: %s %s", p, err, out.String(), stderr.String())
				return
			}
			var ids []flurry.ID
			for line := range strings.Lines(out.String()) {
				if s, ok := strings.CutPrefix(strings.TrimSpace(line), "id "); ok {
					id, err := flurry.ParseID(s)
					if err != nil {
						errs <- err
						return
					}
					ids = append(ids, id)
				}
			}
			if len(ids) != perProc {
				errs <- fmt.Errorf("process %d printed %d IDs, want %d: %s", p, len(ids), perProc, stderr.String())
				return
			}
			mu.Lock()
			all = append(all, ids)
			mu.Unlock()
		})
	}
	for range 2 {
		gen := newGen(t, Options{URL: testenv.Redis.URL(t), Namespace: ns, Layout: l})
		wg.Go(func() {
			ctx := testCtx(t)
			var ids []flurry.ID
			buf := make([]flurry.ID, 1+rand.IntN(50))
			for len(ids) < perProc {
				k, err := gen.NextN(ctx, buf[:min(len(buf), perProc-len(ids))])
				if err != nil {
					errs <- err
					return
				}
				ids = append(ids, buf[:k]...)
			}
			mu.Lock()
			all = append(all, ids)
			mu.Unlock()
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	seen := map[flurry.ID]bool{}
	for _, ids := range all {
		for i, id := range ids {
			if seen[id] {
				t.Fatalf("ID %d issued twice", id)
			}
			seen[id] = true
			if i > 0 && id <= ids[i-1] {
				t.Fatalf("ID %d after %d in one issuer", id, ids[i-1])
			}
		}
	}
	if len(seen) != (procs+2)*perProc {
		t.Fatalf("%d IDs, want %d", len(seen), (procs+2)*perProc)
	}
}

// TestRandomLayouts is a property test of the script's composition: for random
// layouts (fields in random order and widths, so that fields cross bit 32 and
// reach bit 62) and random node values up to each field's maximum, every ID
// decodes with layout.Decompose to the node values set and to a tick Redis TIME
// read around the call.
func TestRandomLayouts(t *testing.T) {
	c := newClient(t)
	r := rand.New(rand.NewPCG(uint64(time.Now().UnixNano()), 1))
	epoch := time.Now().Add(-24 * time.Hour).UTC().Truncate(time.Second)
	for i := range 40 {
		l, nv := randomLayout(t, r, epoch)
		ns := freshNamespace(t, c)
		g := newGen(t, Options{Client: c, Namespace: ns, Layout: l})
		ctx := testCtx(t)
		if len(l.NodeFields()) > 0 {
			if err := g.SetNode(ctx, nv); err != nil {
				t.Fatalf("layout %s: %v", l, err)
			}
		}
		before := redisTick(t, c, l)
		buf := make([]flurry.ID, 5)
		n, err := g.NextN(ctx, buf)
		if err != nil {
			t.Fatalf("layout %s: %v", l, err)
		}
		after := redisTick(t, c, l)
		for _, id := range buf[:n] {
			p, err := l.Decompose(id)
			if err != nil || p.Nodes != nv || p.Tick < before || p.Tick > after {
				t.Fatalf("case %d, layout %s, node %v, ticks %d..%d: ID %d decodes to %+v, %v", i, l, nv, before, after, id, p, err)
			}
		}
	}
}

// randomLayout returns a 63-bit layout with a time field long enough for a day and
// a bit from epoch, up to three node fields, and node values that are often each
// field's maximum.
func randomLayout(t *testing.T, r *rand.Rand, epoch time.Time) (*layout.Layout, layout.NodeValues) {
	units := []string{"1ms", "10ms", "1s"}
	unit := units[r.IntN(len(units))]
	timeBits := map[string]int{"1ms": 28, "10ms": 24, "1s": 18}[unit] + r.IntN(14)
	left := 63 - timeBits
	nNodes := r.IntN(4)
	seqBits := 1 + r.IntN(min(16, left-nNodes))
	left -= seqBits
	var fields []string
	var widths []int
	for k := range nNodes {
		w := 1
		if k == nNodes-1 {
			w = min(left, maxNodeBits)
		} else if rest := left - (nNodes - 1 - k); rest > 1 {
			w = 1 + r.IntN(min(rest, maxNodeBits))
		}
		left -= w
		widths = append(widths, w)
		fields = append(fields, fmt.Sprintf("n%d:%d", k, w))
	}
	if nNodes == 0 {
		seqBits += min(left, 20) // keep the total near 63 without a giant sequence
	}
	pos := r.IntN(len(fields) + 1)
	fields = append(fields[:pos], append([]string{fmt.Sprintf("seq:%d", seqBits)}, fields[pos:]...)...)
	text := fmt.Sprintf("time:%d:%s:%s,%s", timeBits, unit, epoch.Format(time.RFC3339), strings.Join(fields, ","))
	l := mustLayout(t, text)
	var nv layout.NodeValues
	for k, w := range widths {
		max := int64(1)<<w - 1
		switch r.IntN(3) {
		case 0:
			nv[k] = max
		case 1:
			nv[k] = r.Int64N(max + 1)
		}
	}
	return l, nv
}
