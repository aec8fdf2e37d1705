package sqlstore

import (
	"database/sql"
	"errors"
	"fmt"
	"math/rand/v2"
	"sort"
	"strings"
	"sync"
	"testing"

	"github.com/flurryid/flurry/segment"
	"github.com/flurryid/flurry/verify/compattest"
	"github.com/flurryid/flurry/verify/testenv"
)

// scratch makes a dedicated database/schema on a real engine, loads stmts, and
// returns a URL into it with extra query keys.
func scratch(t *testing.T, e compattest.Engine, stmts func(compattest.Engine) []string, keys string) (string, *sql.DB) {
	t.Helper()
	svc := testenv.MySQL
	if e == "postgres" {
		svc = testenv.Postgres
	}
	u, db := testenv.ScratchDB(t, svc)
	if err := compattest.Exec(testCtx(t), db, stmts(e)); err != nil {
		t.Fatal(err)
	}
	if keys != "" {
		if strings.Contains(u, "?") {
			u += "&" + keys
		} else {
			u += "?" + keys
		}
	}
	return u, db
}

func compatEngines() []compattest.Engine { return []compattest.Engine{"mysql", "postgres"} }

// interval is a run of IDs someone holds, both ends included.
type interval struct {
	lo, hi int64
	who    string
}

// disjoint fails the test when two intervals share a value.
func disjoint(t *testing.T, ivs []interval) {
	t.Helper()
	sort.Slice(ivs, func(i, j int) bool { return ivs[i].lo < ivs[j].lo })
	for i := 1; i < len(ivs); i++ {
		if ivs[i].lo <= ivs[i-1].hi {
			t.Fatalf("overlap: %s holds %d..%d and %s holds %d..%d", ivs[i-1].who, ivs[i-1].lo, ivs[i-1].hi, ivs[i].who, ivs[i].lo, ivs[i].hi)
		}
	}
}

// TestTinyIDBesideTinyID runs the TinyID store and tinyid's own statements
// (TinyIdInfoDAOImpl.updateMaxId, as DbSegmentIdServiceImpl issues them) on
// db.sql's rows at once, with flurry handing tails back and reopening (a restart)
// in between: no ID is held twice, in either direction, for both rows of db.sql
// ('test' with delta 1, 'test_odd' with delta 2 remainder 1).
func TestTinyIDBesideTinyID(t *testing.T) {
	for _, e := range compatEngines() {
		t.Run(string(e), func(t *testing.T) {
			u, db := scratch(t, e, compattest.TinyIDDDL, "table=tiny_id_info")
			ctx := testCtx(t)
			for _, biz := range []string{"test", "test_odd"} {
				var (
					mu  sync.Mutex
					ivs []interval
					wg  sync.WaitGroup
				)
				add := func(iv interval) { mu.Lock(); ivs = append(ivs, iv); mu.Unlock() }
				wg.Add(2)
				go func() { // the original
					defer wg.Done()
					for i := 0; i < 40; i++ {
						seg, err := compattest.TinyTake(ctx, db, e, biz)
						if err != nil {
							t.Error(err)
							return
						}
						add(interval{seg.Current + 1, seg.Max, "tinyid"})
					}
				}()
				go func() { // flurry, restarting every 10 takes
					defer wg.Done()
					var st *TinyID
					var floor int64
					for i := 0; i < 40; i++ {
						if i%10 == 0 {
							if st != nil {
								st.Close()
							}
							s, err := openAny(ctx, u)
							if err != nil {
								t.Error(err)
								return
							}
							st = s.(*TinyID)
						}
						delta, rem, err := st.Residue(ctx, biz)
						if err != nil {
							t.Error(err)
							return
						}
						b, err := st.Take(ctx, biz, 1+rand.Int64N(3000), floor, 0)
						if err != nil {
							t.Error(err)
							return
						}
						floor = b.Last
						keep := b.Last
						if rand.IntN(2) == 0 && b.Len() > 1 { // use part, hand the tail back
							keep = b.First + rand.Int64N(b.Len()-1)
							if err := st.Return(ctx, biz, segment.Block{First: keep + 1, Last: b.Last}); err != nil {
								t.Error(err)
								return
							}
							floor = keep
						}
						add(interval{b.First*delta + rem, keep*delta + rem, "flurry"})
					}
					st.Close()
				}()
				wg.Wait()
				if t.Failed() {
					return
				}
				disjoint(t, ivs)
			}
		})
	}
}

// TestTinyIDSemantics checks the store against tinyid's meaning of a row:
// max_id is the last ID handed out (DbSegmentIdServiceImpl.convert sets currentId
// to max_id-step and SegmentId.nextId adds delta first), and a row's IDs are
// those with id % delta == remainder (SegmentId.init).
func TestTinyIDSemantics(t *testing.T) {
	for _, e := range compatEngines() {
		t.Run(string(e), func(t *testing.T) {
			u, db := scratch(t, e, compattest.TinyIDDDL, "schema=tinyid")
			ctx := testCtx(t)
			s, err := openAny(ctx, u)
			if err != nil {
				t.Fatal(err)
			}
			defer s.Close()
			st := s.(*TinyID)
			// db.sql: test has max_id 1, so tinyid's first ID is 2.
			b, err := st.Take(ctx, "test", 10, 0, 0)
			if err != nil {
				t.Fatal(err)
			}
			if b.First != 2 || b.Last != 11 || b.Step != 100000 {
				t.Fatalf("test: block %+v, want 2..11 step 100000", b)
			}
			seg, err := compattest.TinyTake(ctx, db, e, "test")
			if err != nil {
				t.Fatal(err)
			}
			if seg.Current != 11 {
				t.Fatalf("tinyid after flurry: current %d, want 11 (max_id = the last ID handed out)", seg.Current)
			}
			// test_odd: delta 2, remainder 1, max_id 1: first odd ID above 1 is 3.
			d, r, err := st.Residue(ctx, "test_odd")
			if err != nil || d != 2 || r != 1 {
				t.Fatalf("Residue: %d %d %v", d, r, err)
			}
			b, err = st.Take(ctx, "test_odd", 5, 0, 0)
			if err != nil {
				t.Fatal(err)
			}
			if got := []int64{b.First*d + r, b.Last*d + r}; got[0] != 3 || got[1] != 11 || b.Step != 50000 {
				t.Fatalf("test_odd: IDs %v step %d, want 3..11 step 50000", got, b.Step)
			}
			var maxID int64
			if err := db.QueryRowContext(ctx, "SELECT max_id FROM tiny_id_info WHERE biz_type = 'test_odd'").Scan(&maxID); err != nil || maxID != 11 {
				t.Fatalf("max_id %d (%v), want 11", maxID, err)
			}
			// Handing 9..11 (counters 4..5) back while nobody took since rewinds max_id.
			if err := st.Return(ctx, "test_odd", segment.Block{First: 4, Last: 5}); err != nil {
				t.Fatal(err)
			}
			if err := db.QueryRowContext(ctx, "SELECT max_id FROM tiny_id_info WHERE biz_type = 'test_odd'").Scan(&maxID); err != nil || maxID != 7 {
				t.Fatalf("max_id after the return %d (%v), want 7", maxID, err)
			}
			seg, err = compattest.TinyTake(ctx, db, e, "test_odd")
			if err != nil {
				t.Fatal(err)
			}
			if ids := seg.IDs(); ids[0] != 9 {
				t.Fatalf("tinyid's first ID after the return: %d, want 9", ids[0])
			}
			// A return after someone else took is skipped, not applied.
			if err := st.Return(ctx, "test_odd", segment.Block{First: 3, Last: 3}); err != nil {
				t.Fatal(err)
			}
			if err := db.QueryRowContext(ctx, "SELECT max_id FROM tiny_id_info WHERE biz_type = 'test_odd'").Scan(&maxID); err != nil || maxID != seg.Max {
				t.Fatalf("max_id %d (%v), want tinyid's %d untouched", maxID, err, seg.Max)
			}
			// nextSegmentId's range is tinyid's to the digit.
			ns, err := st.NextSegment(ctx, "test")
			if err != nil {
				t.Fatal(err)
			}
			want := Segment{CurrentID: 100011, LoadingID: 100011 + 20000, MaxID: 200011, Delta: 1, Remainder: 0}
			if ns != want {
				t.Fatalf("NextSegment %+v, want %+v", ns, want)
			}
			toks, err := st.Tokens(ctx)
			if err != nil {
				t.Fatal(err)
			}
			got := toks["0f673adf80504e2eaa552f5d791b644c"]
			sort.Strings(got)
			if fmt.Sprint(got) != "[test test_odd]" {
				t.Fatalf("tokens %v", toks)
			}
			if _, err := st.Take(ctx, "nope", 1, 0, 0); !errors.Is(err, segment.ErrUnknownTag) {
				t.Fatalf("unknown biz_type: %v", err)
			}
		})
	}
}

// TestLeafTableBesideLeaf runs flurry's stores on leaf_alloc and Leaf's own
// statements (IDAllocMapper.updateMaxId / updateMaxIdByCustomStep with
// getLeafAlloc, in IDAllocDaoImpl's transaction) at once, with hand-backs and
// reopens: no value is held twice. schema=leaf uses only SELECT and UPDATE on
// leaf_alloc; the default schema adds leaf_alloc_returned.
func TestLeafTableBesideLeaf(t *testing.T) {
	for _, e := range compatEngines() {
		for _, schema := range []string{"leaf", "flurry"} {
			t.Run(string(e)+"/"+schema, func(t *testing.T) {
				u, db := scratch(t, e, compattest.LeafDDL, "table=leaf_alloc&schema="+schema)
				ctx := testCtx(t)
				const tag = "leaf-segment-test"
				var (
					mu  sync.Mutex
					ivs []interval
					wg  sync.WaitGroup
				)
				add := func(iv interval) { mu.Lock(); ivs = append(ivs, iv); mu.Unlock() }
				wg.Add(2)
				go func() {
					defer wg.Done()
					for i := 0; i < 40; i++ {
						step := int64(0)
						if i%2 == 1 {
							step = 4000 // Leaf's dynamic step doubles
						}
						lo, hi, err := compattest.LeafTake(ctx, db, e, tag, step)
						if err != nil {
							t.Error(err)
							return
						}
						add(interval{lo, hi, "leaf"})
					}
				}()
				go func() {
					defer wg.Done()
					var st segment.Store
					var floor int64
					for i := 0; i < 40; i++ {
						if i%10 == 0 {
							if st != nil {
								st.Close()
							}
							var err error
							if st, err = openAny(ctx, u); err != nil {
								t.Error(err)
								return
							}
						}
						b, err := st.Take(ctx, tag, 1+rand.Int64N(3000), floor, 0)
						if err != nil {
							t.Error(err)
							return
						}
						keep := b.Last
						if rand.IntN(2) == 0 && b.Len() > 1 {
							keep = b.First + rand.Int64N(b.Len()-1)
							if err := st.Return(ctx, tag, segment.Block{First: keep + 1, Last: b.Last}); err != nil {
								t.Error(err)
								return
							}
						}
						floor = keep
						add(interval{b.First, keep, "flurry"})
					}
					st.Close()
				}()
				wg.Wait()
				if t.Failed() {
					return
				}
				disjoint(t, ivs)
				if schema == "leaf" {
					var n int
					err := db.QueryRowContext(ctx, "SELECT COUNT(*) FROM information_schema.tables WHERE table_name = 'leaf_alloc_returned'").Scan(&n)
					if err != nil || n != 0 {
						t.Fatalf("schema=leaf made leaf_alloc_returned (%d, %v)", n, err)
					}
				}
			})
		}
	}
}

// TestLeafTableRewind: a lone server's graceful hand-back rewinds max_id, so its
// restart loses nothing, and the next Leaf UPDATE starts right there.
func TestLeafTableRewind(t *testing.T) {
	for _, e := range compatEngines() {
		t.Run(string(e), func(t *testing.T) {
			u, db := scratch(t, e, compattest.LeafDDL, "schema=leaf")
			ctx := testCtx(t)
			st, err := openAny(ctx, u)
			if err != nil {
				t.Fatal(err)
			}
			defer st.Close()
			b, err := st.Take(ctx, "leaf-segment-test", 100, 0, 0)
			if err != nil {
				t.Fatal(err)
			}
			if b.First != 1 || b.Last != 100 || b.Step != 2000 {
				t.Fatalf("block %+v, want 1..100 step 2000 (README row: max_id 1)", b)
			}
			if err := st.Return(ctx, "leaf-segment-test", segment.Block{First: 41, Last: 100}); err != nil {
				t.Fatal(err)
			}
			lo, _, err := compattest.LeafTake(ctx, db, e, "leaf-segment-test", 0)
			if err != nil || lo != 41 {
				t.Fatalf("Leaf after the hand-back starts at %d (%v), want 41", lo, err)
			}
		})
	}
}
