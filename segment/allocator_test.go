package segment_test

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"path/filepath"
	"sort"
	"sync"
	"testing"
	"time"

	"github.com/flurryid/flurry"
	"github.com/flurryid/flurry/internal/storeurl"
	"github.com/flurryid/flurry/segment"
	"github.com/flurryid/flurry/segment/sqlstore"
	"github.com/flurryid/flurry/verify/segmenttest"
	"github.com/flurryid/flurry/verify/testenv"
)

func testCtx(t testing.TB) context.Context {
	c, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	t.Cleanup(cancel)
	return c
}

// sqlite opens a store on a fresh SQLite file.
func sqlite(t testing.TB) segment.Store {
	t.Helper()
	return openURL(t, "sqlite://"+filepath.Join(t.TempDir(), "segments.db"))
}

func openURL(t testing.TB, rawURL string) segment.Store {
	t.Helper()
	s, err := storeurl.ParseOpen[*sqlstore.Store](sqlstore.ParseURL, sqlstore.Open)(testCtx(t), rawURL)
	if err != nil {
		t.Fatalf("open %s: %v", rawURL, err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

func newTag(t testing.TB, step int64, stores ...segment.Store) string {
	t.Helper()
	tag := segmenttest.TagName(t)
	for _, s := range stores {
		if err := s.Create(testCtx(t), segment.Tag{Name: tag, Step: step}); err != nil {
			t.Fatalf("create %s: %v", tag, err)
		}
	}
	return tag
}

func newAlloc(t testing.TB, opts segment.Options) *segment.Allocator {
	t.Helper()
	a, err := segment.New(testCtx(t), opts)
	if err != nil {
		t.Fatalf("segment.New: %v", err)
	}
	t.Cleanup(func() { a.Close(context.Background()) })
	return a
}

// recorder passes calls to a real store and notes the sizes asked of Take.
type recorder struct {
	segment.Store
	mu    sync.Mutex
	asked []int64
}

func (r *recorder) Take(ctx context.Context, tag string, n, floor, limit int64) (segment.Block, error) {
	r.mu.Lock()
	r.asked = append(r.asked, n)
	r.mu.Unlock()
	return r.Store.Take(ctx, tag, n, floor, limit)
}

func (r *recorder) takes() []int64 {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]int64(nil), r.asked...)
}

func TestServesEveryValueInOrder(t *testing.T) {
	s := sqlite(t)
	tag := newTag(t, 10, s)
	a := newAlloc(t, segment.Options{Stores: []segment.Store{s}, Tag: tag})
	for want := flurry.ID(1); want <= 1000; want++ {
		id, err := a.Next(testCtx(t))
		if err != nil {
			t.Fatalf("Next %d: %v", want, err)
		}
		if id != want {
			t.Fatalf("Next gave %d, want %d", id, want)
		}
	}
	if st := a.Stats(); st.Fetches < 5 || st.Err != nil {
		t.Fatalf("stats %+v: want several fetches and no error", st)
	}
}

func TestNextN(t *testing.T) {
	s := sqlite(t)
	tag := newTag(t, 100, s)
	a := newAlloc(t, segment.Options{Stores: []segment.Store{s}, Tag: tag})
	ids := make([]flurry.ID, 2500)
	n, err := a.NextN(testCtx(t), ids)
	if err != nil || n != len(ids) {
		t.Fatalf("NextN: %d, %v", n, err)
	}
	for i, id := range ids {
		if id != flurry.ID(i+1) {
			t.Fatalf("ids[%d] = %d, want %d", i, id, i+1)
		}
	}
	if id, _ := a.Next(testCtx(t)); id != 2501 {
		t.Fatalf("Next after NextN: %d, want 2501", id)
	}
}

func TestUnknownTag(t *testing.T) {
	s := sqlite(t)
	_, err := segment.New(testCtx(t), segment.Options{Stores: []segment.Store{s}, Tag: "never-created"})
	if !errors.Is(err, segment.ErrUnknownTag) {
		t.Fatalf("New with an unknown tag: %v, want ErrUnknownTag", err)
	}
}

func TestBadOptions(t *testing.T) {
	s := sqlite(t)
	tag := newTag(t, 10, s)
	for _, o := range []segment.Options{
		{Tag: tag},
		{Stores: []segment.Store{s}},
		{Stores: []segment.Store{s}, Tag: "bad tag"},
		{Stores: []segment.Store{s, nil}, Tag: tag},
		{Stores: []segment.Store{s}, Tag: tag, Prefetch: 1},
		{Stores: []segment.Store{s}, Tag: tag, MaxStep: -1},
		{Stores: []segment.Store{s}, Tag: tag, Runway: -time.Second},
	} {
		if a, err := segment.New(testCtx(t), o); err == nil {
			a.Close(context.Background())
			t.Errorf("New(%+v) accepted", o)
		}
	}
}

func TestNextAllocatesNothing(t *testing.T) {
	s := sqlite(t)
	tag := newTag(t, 1_000_000, s)
	a := newAlloc(t, segment.Options{Stores: []segment.Store{s}, Tag: tag})
	ctx := context.Background()
	a.Next(ctx) // the prefetch goroutine is kicked at 10%, far away
	if n := testing.AllocsPerRun(10000, func() { a.Next(ctx) }); n != 0 {
		t.Fatalf("Next allocates %v times per call with a ready buffer", n)
	}
}

// collect runs goroutines that each take count IDs from their allocator and checks
// that no ID repeats and each goroutine's IDs increase.
func collect(t *testing.T, allocs []*segment.Allocator, perAlloc, count int) []flurry.ID {
	t.Helper()
	var (
		mu  sync.Mutex
		all []flurry.ID
		wg  sync.WaitGroup
	)
	errs := make(chan error, len(allocs)*perAlloc)
	for _, a := range allocs {
		for g := 0; g < perAlloc; g++ {
			wg.Add(1)
			go func() {
				defer wg.Done()
				mine := make([]flurry.ID, 0, count)
				for len(mine) < count {
					id, err := a.Next(testCtx(t))
					if err != nil {
						errs <- err
						return
					}
					if len(mine) > 0 && id <= mine[len(mine)-1] {
						errs <- fmt.Errorf("ID %d after %d from one goroutine", id, mine[len(mine)-1])
						return
					}
					mine = append(mine, id)
				}
				mu.Lock()
				all = append(all, mine...)
				mu.Unlock()
			}()
		}
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	noDuplicates(t, all)
	return all
}

func noDuplicates(t *testing.T, ids []flurry.ID) {
	t.Helper()
	sorted := append([]flurry.ID(nil), ids...)
	sort.Slice(sorted, func(i, j int) bool { return sorted[i] < sorted[j] })
	for i := 1; i < len(sorted); i++ {
		if sorted[i] == sorted[i-1] {
			t.Fatalf("ID %d issued twice (of %d IDs)", sorted[i], len(sorted))
		}
	}
	if len(sorted) > 0 && sorted[0] < 1 {
		t.Fatalf("ID %d is not positive", sorted[0])
	}
}

func TestConcurrentNext(t *testing.T) {
	s := sqlite(t)
	tag := newTag(t, 7, s)
	a := newAlloc(t, segment.Options{Stores: []segment.Store{s}, Tag: tag, MaxStep: 64})
	ids := collect(t, []*segment.Allocator{a}, 8, 5000)
	// One allocator alone on a tag leaves no gap.
	sort.Slice(ids, func(i, j int) bool { return ids[i] < ids[j] })
	if ids[len(ids)-1] != flurry.ID(len(ids)) {
		t.Fatalf("highest ID %d after %d IDs from one allocator", ids[len(ids)-1], len(ids))
	}
}

func TestSeveralAllocatorsPostgres(t *testing.T) {
	raw := testenv.Postgres.URL(t)
	var allocs []*segment.Allocator
	setup := openURL(t, raw)
	tag := newTag(t, 5, setup)
	for i := 0; i < 4; i++ {
		s := openURL(t, raw)
		allocs = append(allocs, newAlloc(t, segment.Options{Stores: []segment.Store{s}, Tag: tag, MaxStep: 40}))
	}
	collect(t, allocs, 2, 3000)
}

func TestCloseHandsBackTheRest(t *testing.T) {
	s := sqlite(t)
	tag := newTag(t, 100, s)
	a, err := segment.New(testCtx(t), segment.Options{Stores: []segment.Store{s}, Tag: tag})
	if err != nil {
		t.Fatal(err)
	}
	for i := 0; i < 10; i++ {
		a.Next(testCtx(t))
	}
	waitFor(t, "the next range", func() bool { return a.Stats().NextReady })
	st := a.Stats()
	want := 90 + int64(st.NextLast-st.NextFirst) + 1
	if err := a.Close(testCtx(t)); err != nil {
		t.Fatalf("Close: %v", err)
	}
	if _, err := a.Next(testCtx(t)); !errors.Is(err, segment.ErrClosed) {
		t.Fatalf("Next after Close: %v, want ErrClosed", err)
	}
	tags, _ := s.Tags(testCtx(t))
	for _, x := range tags {
		if x.Name == tag && x.Returned != want {
			t.Fatalf("after Close the store holds %d returned values, want %d (11..100 and the prefetched range %d..%d)", x.Returned, want, st.NextFirst, st.NextLast)
		}
	}
	b := newAlloc(t, segment.Options{Stores: []segment.Store{s}, Tag: tag})
	for want := flurry.ID(11); want <= 300; want++ {
		id, err := b.Next(testCtx(t))
		if err != nil || id != want {
			t.Fatalf("after a graceful restart: %d, %v; want %d (no ID lost)", id, err, want)
		}
	}
}

// TestStepAfterRestart: an allocator that starts on handed-back ranges reports the
// step its next fresh range will be asked with (the tag's), not 0; the dashboard
// showed "Step 0" after every graceful restart.
func TestStepAfterRestart(t *testing.T) {
	s := sqlite(t)
	tag := newTag(t, 100, s)
	a, err := segment.New(testCtx(t), segment.Options{Stores: []segment.Store{s}, Tag: tag})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := a.Next(testCtx(t)); err != nil {
		t.Fatal(err)
	}
	if err := a.Close(testCtx(t)); err != nil {
		t.Fatalf("Close: %v", err)
	}
	b := newAlloc(t, segment.Options{Stores: []segment.Store{s}, Tag: tag})
	if id, err := b.Next(testCtx(t)); err != nil || id != 2 {
		t.Fatalf("first ID after the restart: %d, %v; want 2 (a handed-back range)", id, err)
	}
	if st := b.Stats(); st.Claimed == 0 || st.MinStep != 100 || st.Step < st.MinStep {
		t.Errorf("after a restart on a handed-back range: claimed %d, step %d, min step %d; want step >= 100 and min step 100", st.Claimed, st.Step, st.MinStep)
	}
}

func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("gave up waiting for %s", what)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// proxied returns a PostgreSQL URL that goes through a proxy the test can cut.
func proxied(t *testing.T) (string, *testenv.Proxy) {
	raw := testenv.Postgres.URL(t)
	u, err := url.Parse(raw)
	if err != nil {
		t.Fatal(err)
	}
	p := testenv.StartProxy(t, u.Host)
	u.Host = p.Addr()
	q := u.Query()
	q.Set("connect_timeout", "2")
	u.RawQuery = q.Encode()
	return u.String(), p
}

func TestOutageServesBufferThenFailsThenRecovers(t *testing.T) {
	raw, proxy := proxied(t)
	s := openURL(t, raw)
	tag := newTag(t, 1000, s)
	a := newAlloc(t, segment.Options{Stores: []segment.Store{s}, Tag: tag, FetchTimeout: 2 * time.Second, RetryMax: 100 * time.Millisecond})
	var ids []flurry.ID
	next := func() (flurry.ID, error) {
		id, err := a.Next(context.Background())
		if err == nil {
			ids = append(ids, id)
		}
		return id, err
	}
	for i := 0; i < 150; i++ { // past 10%: the next range is fetched
		if _, err := next(); err != nil {
			t.Fatal(err)
		}
	}
	waitFor(t, "the next range", func() bool { return a.Stats().NextReady })
	proxy.Cut()
	st := a.Stats()
	buffered := st.Buffered
	if want := 850 + int64(st.NextLast-st.NextFirst) + 1; buffered != want {
		t.Fatalf("buffered %d at the cut, want %d: the rest of the current range and the next", buffered, want)
	}
	// Every buffered ID is served with the database gone; the background fetch
	// that the move to the last range starts fails meanwhile.
	for i := int64(0); i < buffered; i++ {
		if _, err := next(); err != nil {
			t.Fatalf("Next %d of %d buffered during the outage: %v", i+1, buffered, err)
		}
	}
	waitFor(t, "the failed fetch", func() bool { return a.Stats().Err != nil })
	// Dry: the typed error, at once (a wait would hang here: the context has no
	// deadline and the database is gone).
	for i := 0; i < 3; i++ {
		if _, err := next(); !errors.Is(err, segment.ErrUnavailable) {
			t.Fatalf("Next with the buffers dry: %v, want ErrUnavailable", err)
		}
	}
	if st := a.Stats(); st.Buffered != 0 || st.Failures == 0 {
		t.Fatalf("stats in the outage: %+v", st)
	}
	proxy.Restore()
	waitFor(t, "recovery", func() bool {
		_, err := next()
		return err == nil
	})
	for i := 0; i < 2000; i++ {
		if _, err := next(); err != nil {
			t.Fatalf("after recovery: %v", err)
		}
	}
	noDuplicates(t, ids)
	for i := 1; i < len(ids); i++ {
		if ids[i] <= ids[i-1] {
			t.Fatalf("ID %d after %d", ids[i], ids[i-1])
		}
	}
	if a.Stats().Err != nil {
		t.Fatalf("error still reported after recovery: %v", a.Stats().Err)
	}
}

func TestResidueClassesFailOver(t *testing.T) {
	raw, proxy := proxied(t)
	pg := openURL(t, raw)
	lite := &gate{Store: sqlite(t)}
	tag := newTag(t, 50, pg, lite.Store)
	stores := []segment.Store{pg, lite}
	// SQLite refuses while the allocators start, so that both start on PostgreSQL
	// (each starts at a random store: a quarter of the runs would never use it).
	lite.down.Store(true)
	a := newAlloc(t, segment.Options{Stores: stores, Tag: tag, MaxStep: 200, FetchTimeout: 2 * time.Second, RetryMax: 50 * time.Millisecond})
	b := newAlloc(t, segment.Options{Stores: stores, Tag: tag, MaxStep: 200, FetchTimeout: 2 * time.Second, RetryMax: 50 * time.Millisecond})
	lite.down.Store(false)
	var all []flurry.ID
	take := func(a *segment.Allocator, n int) {
		var last flurry.ID
		for i := 0; i < n; {
			id, err := a.Next(context.Background())
			if errors.Is(err, segment.ErrUnavailable) {
				time.Sleep(10 * time.Millisecond)
				continue
			}
			if err != nil {
				t.Fatal(err)
			}
			if id <= last {
				t.Fatalf("ID %d after %d from one allocator", id, last)
			}
			last = id
			all = append(all, id)
			i++
		}
	}
	take(a, 1000)
	take(b, 1000)
	proxy.Cut() // PostgreSQL, residue class 0, goes away: SQLite serves both
	take(a, 2000)
	take(b, 2000)
	proxy.Restore()
	take(a, 1000)
	take(b, 1000)
	noDuplicates(t, all)
	odd := 0
	for _, id := range all {
		odd += int(id % 2)
	}
	if odd == 0 || odd == len(all) {
		t.Fatalf("%d of %d IDs odd: want IDs from both residue classes", odd, len(all))
	}
}

func TestDynamicStepGrows(t *testing.T) {
	s := sqlite(t)
	tag := newTag(t, 10, s)
	rec := &recorder{Store: s}
	a := newAlloc(t, segment.Options{Stores: []segment.Store{rec}, Tag: tag, MaxStep: 80})
	ids := make([]flurry.ID, 10+20+40+80+80)
	if _, err := a.NextN(testCtx(t), ids); err != nil {
		t.Fatal(err)
	}
	got := rec.takes()
	want := []int64{10, 20, 40, 80, 80}
	if len(got) < len(want) {
		t.Fatalf("takes %v, want at least %v", got, want)
	}
	for i := range want {
		if got[i] != want[i] {
			t.Fatalf("takes %v: ranges lasting under Target should double up to MaxStep: %v", got, want)
		}
	}
}

func TestSetStepReachesRunningAllocator(t *testing.T) {
	s := sqlite(t)
	tag := newTag(t, 10, s)
	rec := &recorder{Store: s}
	a := newAlloc(t, segment.Options{Stores: []segment.Store{rec}, Tag: tag, MaxStep: 10})
	if err := s.SetStep(testCtx(t), tag, 500); err != nil {
		t.Fatal(err)
	}
	ids := make([]flurry.ID, 1000)
	if _, err := a.NextN(testCtx(t), ids); err != nil {
		t.Fatal(err)
	}
	got := rec.takes()
	if got[len(got)-1] != 500 {
		t.Fatalf("takes %v: after SetStep 500 the allocator should take 500 at a time", got)
	}
}

func BenchmarkNext(b *testing.B) {
	s := sqlite(b)
	tag := newTag(b, 1_000_000, s)
	a := newAlloc(b, segment.Options{Stores: []segment.Store{s}, Tag: tag, MaxStep: 50_000_000})
	ctx := context.Background()
	b.ReportAllocs()
	b.ResetTimer()
	for b.Loop() {
		if _, err := a.Next(ctx); err != nil {
			b.Fatal(err)
		}
	}
	b.StopTimer()
	st := a.Stats()
	b.ReportMetric(float64(st.Fetches)/float64(st.CurrentLast)*1e6, "fetches/1M")
}

func BenchmarkNextParallel(b *testing.B) {
	s := sqlite(b)
	tag := newTag(b, 1_000_000, s)
	a := newAlloc(b, segment.Options{Stores: []segment.Store{s}, Tag: tag, MaxStep: 50_000_000})
	b.ReportAllocs()
	b.ResetTimer()
	b.RunParallel(func(pb *testing.PB) {
		ctx := context.Background()
		for pb.Next() {
			if _, err := a.Next(ctx); err != nil {
				b.Error(err)
				return
			}
		}
	})
}

func BenchmarkNextN1000(b *testing.B) {
	s := sqlite(b)
	tag := newTag(b, 1_000_000, s)
	a := newAlloc(b, segment.Options{Stores: []segment.Store{s}, Tag: tag, MaxStep: 50_000_000})
	ctx := context.Background()
	ids := make([]flurry.ID, 1000)
	b.ReportAllocs()
	b.ResetTimer()
	for b.Loop() {
		if _, err := a.NextN(ctx, ids); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*len(ids)), "ns/id")
}

// BenchmarkRoundTrips serves IDs from PostgreSQL with the tag's step at Leaf's
// usual 1000 and reports how many database round trips (Takes) 1M IDs cost.
func BenchmarkRoundTrips(b *testing.B) {
	raw := testenv.Postgres.URL(b)
	s := openURL(b, raw)
	tag := newTag(b, 1000, s)
	rec := &recorder{Store: s}
	a := newAlloc(b, segment.Options{Stores: []segment.Store{rec}, Tag: tag})
	ctx := context.Background()
	ids := make([]flurry.ID, 1000)
	b.ResetTimer()
	for b.Loop() {
		if _, err := a.NextN(ctx, ids); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(len(rec.takes()))/float64(b.N*len(ids))*1e6, "takes/1M")
}
