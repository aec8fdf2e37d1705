package segment_test

import (
	"bufio"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"

	"github.com/flurryid/flurry"
	"github.com/flurryid/flurry/internal/storeurl"
	"github.com/flurryid/flurry/segment"
	"github.com/flurryid/flurry/segment/sqlstore"
	"github.com/flurryid/flurry/verify/testenv"
)

// The multi-process test runs this test binary again as its children; a child finds
// its orders in these variables.
const (
	envChild = "FLURRY_SEGMENT_CHILD" // the store URL
	envTag   = "FLURRY_SEGMENT_TAG"
	envOut   = "FLURRY_SEGMENT_OUT" // file name prefix
	envCount = "FLURRY_SEGMENT_COUNT"
)

func TestMain(m *testing.M) {
	if raw := os.Getenv(envChild); raw != "" {
		os.Exit(child(raw))
	}
	os.Exit(m.Run())
}

// child serves the tag with two allocators, each with its own connection and
// goroutine, writing its IDs in issue order to <out>.<i>, and closes them
// gracefully at the end (handing back what is left).
func child(raw string) int {
	count, _ := strconv.Atoi(os.Getenv(envCount))
	ctx := context.Background()
	var wg sync.WaitGroup
	code := 0
	var mu sync.Mutex
	fail := func(err error) {
		mu.Lock()
		defer mu.Unlock()
		fmt.Fprintln(os.Stderr, "child:", err)
		code = 1
	}
	for i := 0; i < 2; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			s, err := storeurl.ParseOpen[*sqlstore.Store](sqlstore.ParseURL, sqlstore.Open)(ctx, raw)
			if err != nil {
				fail(err)
				return
			}
			defer s.Close()
			a, err := segment.New(ctx, segment.Options{Stores: []segment.Store{s}, Tag: os.Getenv(envTag), MaxStep: 200})
			if err != nil {
				fail(err)
				return
			}
			f, err := os.Create(fmt.Sprintf("%s.%d", os.Getenv(envOut), i))
			if err != nil {
				fail(err)
				return
			}
			defer f.Close()
			w := bufio.NewWriter(f)
			for n := 0; n < count; n++ {
				id, err := a.Next(ctx)
				if err != nil {
					fail(err)
					return
				}
				fmt.Fprintln(w, id)
				if n%500 == 499 {
					w.Flush()
				}
			}
			w.Flush()
			if err := a.Close(ctx); err != nil {
				fail(err)
			}
		}()
	}
	wg.Wait()
	return code
}

func TestProcessesShareATag(t *testing.T) {
	raw := testenv.Postgres.URL(t)
	setup := openURL(t, raw)
	tag := newTag(t, 20, setup)
	dir := t.TempDir()
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	start := func(i, count int) *exec.Cmd {
		cmd := exec.Command(exe, "-test.run=^$")
		cmd.Env = append(os.Environ(), envChild+"="+raw, envTag+"="+tag,
			envOut+"="+filepath.Join(dir, "p"+strconv.Itoa(i)), envCount+"="+strconv.Itoa(count))
		cmd.Stderr = os.Stderr
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		return cmd
	}
	const perAlloc = 20000
	var cmds []*exec.Cmd
	for i := 0; i < 3; i++ {
		cmds = append(cmds, start(i, perAlloc))
	}
	victim := start(3, 1<<30)
	// Kill the victim with SIGKILL once it has written a few thousand IDs: its
	// buffered ranges are neither handed back nor reissued.
	waitFor(t, "the victim's first IDs", func() bool {
		fi, err := os.Stat(filepath.Join(dir, "p3.0"))
		return err == nil && fi.Size() > 20000
	})
	victim.Process.Signal(syscall.SIGKILL)
	victim.Wait()
	for i, c := range cmds {
		if err := c.Wait(); err != nil {
			t.Fatalf("process %d: %v", i, err)
		}
	}
	// A last allocator after the others closed starts with what they handed back.
	a := newAlloc(t, segment.Options{Stores: []segment.Store{setup}, Tag: tag})
	var all []flurry.ID
	var last flurry.ID
	for i := 0; i < 1000; i++ {
		id, err := a.Next(testCtx(t))
		if err != nil {
			t.Fatal(err)
		}
		if id <= last {
			t.Fatalf("last allocator: %d after %d", id, last)
		}
		last = id
		all = append(all, id)
	}
	files, _ := filepath.Glob(filepath.Join(dir, "p*"))
	if len(files) != 8 {
		t.Fatalf("%d output files, want 8 (4 processes x 2 allocators)", len(files))
	}
	for _, name := range files {
		ids := readIDs(t, name)
		for i := 1; i < len(ids); i++ {
			if ids[i] <= ids[i-1] {
				t.Fatalf("%s: ID %d after %d: one allocator's IDs must increase", filepath.Base(name), ids[i], ids[i-1])
			}
		}
		if !strings.HasPrefix(filepath.Base(name), "p3") && len(ids) != perAlloc {
			t.Fatalf("%s: %d IDs, want %d", filepath.Base(name), len(ids), perAlloc)
		}
		all = append(all, ids...)
	}
	noDuplicates(t, all)
	t.Logf("%d IDs from 8 allocators in 4 processes (one killed) and one more allocator: no duplicate", len(all))
}

func readIDs(t *testing.T, name string) []flurry.ID {
	t.Helper()
	data, err := os.ReadFile(name)
	if err != nil {
		t.Fatal(err)
	}
	// Only whole lines: a SIGKILL can cut the last one short, and "12" of "12345"
	// would be another ID.
	lines := strings.Split(string(data), "\n")
	var ids []flurry.ID
	for _, line := range lines[:len(lines)-1] {
		id, err := flurry.ParseID(line)
		if err != nil {
			t.Fatalf("%s: %q is not an ID", filepath.Base(name), line)
		}
		ids = append(ids, id)
	}
	return ids
}
