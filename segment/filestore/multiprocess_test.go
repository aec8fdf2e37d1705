package filestore_test

import (
	"bufio"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/flurryid/flurry"
	"github.com/flurryid/flurry/segment"
	"github.com/flurryid/flurry/segment/filestore"
)

// The multi-process test runs this test binary again as its children; a child finds
// its orders in these variables.
const (
	envChild = "FLURRY_SEGFILE_CHILD" // the store's directory
	envOut   = "FLURRY_SEGFILE_OUT"   // file name prefix
	envCount = "FLURRY_SEGFILE_COUNT"
)

const tag = "order"

func TestMain(m *testing.M) {
	if dir := os.Getenv(envChild); dir != "" {
		os.Exit(child(dir))
	}
	os.Exit(m.Run())
}

// child serves the tag with two allocators, each on its own Store and goroutine,
// writing its IDs in issue order to <out>.<i>, and closes them gracefully at the end
// (handing back what is left).
func child(dir string) int {
	count, _ := strconv.Atoi(os.Getenv(envCount))
	ctx := context.Background()
	var (
		wg   sync.WaitGroup
		mu   sync.Mutex
		code int
	)
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
			s, err := filestore.New(dir)
			if err != nil {
				fail(err)
				return
			}
			defer s.Close()
			a, err := segment.New(ctx, segment.Options{Stores: []segment.Store{s}, Tag: tag, MaxStep: 200})
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

// TestProcessesShareADirectory: three processes with two allocators each, and a
// fourth killed with SIGKILL while it issues, share one directory; then one more
// allocator starts with what they handed back. No ID is issued twice, and each
// allocator's IDs increase.
func TestProcessesShareADirectory(t *testing.T) {
	dir := t.TempDir()
	store := filepath.Join(dir, "store")
	setup, err := filestore.New(store)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	if err := setup.Create(ctx, segment.Tag{Name: tag, Step: 20}); err != nil {
		t.Fatal(err)
	}
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	start := func(i, count int) *exec.Cmd {
		cmd := exec.Command(exe, "-test.run=^$")
		cmd.Env = append(os.Environ(), envChild+"="+store,
			envOut+"="+filepath.Join(dir, "p"+strconv.Itoa(i)), envCount+"="+strconv.Itoa(count))
		cmd.Stderr = os.Stderr
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		return cmd
	}
	const perAlloc = 5000
	var cmds []*exec.Cmd
	for i := 0; i < 3; i++ {
		cmds = append(cmds, start(i, perAlloc))
	}
	victim := start(3, 1<<30)
	// Kill the victim once it has written a few thousand IDs: its buffered ranges
	// are neither handed back nor reissued.
	deadline := time.Now().Add(time.Minute)
	for {
		fi, err := os.Stat(filepath.Join(dir, "p3.0"))
		if err == nil && fi.Size() > 20000 {
			break
		}
		if time.Now().After(deadline) {
			victim.Process.Kill()
			t.Fatal("the victim wrote no IDs within a minute")
		}
		time.Sleep(10 * time.Millisecond)
	}
	victim.Process.Kill()
	victim.Wait()
	for i, c := range cmds {
		if err := c.Wait(); err != nil {
			t.Fatalf("process %d: %v", i, err)
		}
	}
	a, err := segment.New(ctx, segment.Options{Stores: []segment.Store{setup}, Tag: tag})
	if err != nil {
		t.Fatal(err)
	}
	defer a.Close(ctx)
	var all []flurry.ID
	var last flurry.ID
	for i := 0; i < 1000; i++ {
		id, err := a.Next(ctx)
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
	slices.Sort(all)
	for i := 1; i < len(all); i++ {
		if all[i] == all[i-1] {
			t.Fatalf("ID %d issued twice", all[i])
		}
	}
	t.Logf("%d IDs from 8 allocators in 4 processes (one killed) and one more allocator: no duplicate", len(all))
}

func readIDs(t *testing.T, name string) []flurry.ID {
	t.Helper()
	data, err := os.ReadFile(name)
	if err != nil {
		t.Fatal(err)
	}
	// Only whole lines: a kill can cut the last one short.
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
