package harness

import (
	"bytes"
	"strings"
	"testing"
	"time"
)

// TestStampWriter: every line gets the time it was read, also when it comes in
// pieces; the stamp parses back.
func TestStampWriter(t *testing.T) {
	var b bytes.Buffer
	w := &stampWriter{w: &b}
	for _, s := range []string{"flurry: one\nflurry: t", "wo\n", "flurry: three\nflurry: four\n"} {
		if n, err := w.Write([]byte(s)); n != len(s) || err != nil {
			t.Fatalf("Write(%q) = %d, %v", s, n, err)
		}
	}
	lines := strings.Split(strings.TrimSuffix(b.String(), "\n"), "\n")
	want := []string{"flurry: one", "flurry: two", "flurry: three", "flurry: four"}
	if len(lines) != len(want) {
		t.Fatalf("lines %q, want %d", lines, len(want))
	}
	for i, l := range lines {
		stamp, rest, _ := strings.Cut(l, " ")
		if _, err := time.Parse(StampFormat, stamp); err != nil || rest != want[i] {
			t.Errorf("line %q: stamp %v, rest %q, want %q", l, err, rest, want[i])
		}
	}
}

// TestReadRefusals: refusals are read from flurry serve's log lines and classified
// by the generator's text: the reservation the store has not confirmed (as the
// generator says it now, and as it will say it with an outage budget), a lease
// not renewed in time, a clock behind its mark.
func TestReadRefusals(t *testing.T) {
	log := `---- harness: start n1 at 2026-11-26T14:16:20Z: [flurry serve]
2026-11-26T14:16:28.100000000Z flurry: warning: lease: renewal failed; the generator stops at the grant's end unless a renewal succeeds first (namespace=sfr scope=sfr until=2026-11-26T14:16:35.479Z err="lease/redisstore: renew sfr/0: dial tcp 127.0.0.1:16399: connect: connection refused")
2026-11-26T14:16:31.000000000Z flurry: warning: a request was refused: the namespace cannot issue (namespace=sfr err="lease: lease lost: node worker=0: the reserved window ends at 2026-11-26T14:16:30.53Z and the store has not confirmed a new one")
2026-11-26T14:16:32.000000000Z flurry: warning: a request was refused: the namespace cannot issue (namespace=sfe err="lease: lease lost: node worker=3: the lease store has not confirmed a reservation within the outage budget (1m0s)")
2026-11-26T14:16:33.000000000Z flurry: warning: a request was refused: the namespace cannot issue (namespace=sfe err="lease: lease lost: node worker=3: the lease was not renewed in time, so another process may hold the value; issuing resumes when it is renewed")
2026-11-26T14:16:34.000000000Z flurry: warning: a request was refused: the namespace cannot issue (namespace=sfe err="snowflake: clock moved backwards by 29.9s")
2026-11-26T14:16:35.000000000Z flurry: warning: a request was refused: the namespace cannot issue (namespace=rg err=timeout)
`
	rs := readRefusals(strings.NewReader(log), "n1")
	want := []struct{ ns, cause string }{
		{"sfr", CauseBudget}, {"sfe", CauseBudget}, {"sfe", CauseRenewal}, {"sfe", CauseBehind}, {"rg", "timeout"},
	}
	if len(rs) != len(want) {
		t.Fatalf("%d refusals %+v, want %d", len(rs), rs, len(want))
	}
	for i, w := range want {
		if rs[i].node != "n1" || rs[i].ns != w.ns || refusalCause(rs[i].err) != w.cause {
			t.Errorf("refusal %d: %+v (cause %q), want %s %q", i, rs[i], refusalCause(rs[i].err), w.ns, w.cause)
		}
	}
	from := time.Date(2026, 11, 26, 14, 16, 30, 0, time.UTC)
	if got, want := causes(rs, "sfe", "", from, from.Add(5*time.Second)), CauseBudget+" ×1; "+CauseRenewal+" ×1; "+CauseBehind+" ×1"; got != want {
		t.Errorf("causes:\n%s\nwant\n%s", got, want)
	}
	if got := causes(rs, "sfe", "n2", from, from.Add(5*time.Second)); got != "" {
		t.Errorf("causes of another node: %q", got)
	}
}

// TestSumCalls: a caller's longest wait runs from the start of its first failed
// call to the end of the call that got an ID; calls answered at once from the
// buffer count one per ID; a caller still waiting at the end says so.
func TestSumCalls(t *testing.T) {
	t0 := time.Unix(1795000000, 0)
	at := func(ms int) time.Time { return t0.Add(time.Duration(ms) * time.Millisecond) }
	calls := []call{
		{caller: "a", ns: "sfe", node: "n1", start: at(0), end: at(900), ids: 500},
		{caller: "a", ns: "sfe", err: "503 x", start: at(1000), end: at(1010)},
		{caller: "a", ns: "sfe", err: "timeout", start: at(1030), end: at(3030)},
		{caller: "a", ns: "sfe", node: "n2", start: at(3050), end: at(3100), ids: 1},
		{caller: "b", ns: "sfe", node: "n2", start: at(0), end: at(1500), ids: 1},
		{caller: "b", ns: "sfe", node: "n2", start: at(1600), end: at(1700), ids: 100},
		{caller: "c", ns: "seg", node: "n1", start: at(0), end: at(10), ids: 10},
		{caller: "c", ns: "seg", err: "503 y", start: at(20), end: at(30)},
		{caller: "c", ns: "seg", err: "503 y", start: at(50), end: at(4000)},
	}
	sums := sumCalls(calls)
	sfe := sums["sfe"]
	if sfe.Calls != 604 || sfe.Answered != 602 || sfe.Errors["503 x"] != 1 || sfe.Errors["timeout"] != 1 {
		t.Errorf("sfe %+v", sfe)
	}
	if sfe.Wait != 2100*time.Millisecond || sfe.WaitCaller != "a" || !sfe.WaitFrom.Equal(at(1000)) || sfe.Open {
		t.Errorf("sfe wait %v by %s from %v (open %v), want 2.1s by a from the first failed call", sfe.Wait, sfe.WaitCaller, sfe.WaitFrom, sfe.Open)
	}
	seg := sums["seg"]
	if seg.Wait != 3980*time.Millisecond || !seg.Open || seg.Availability() != 10.0/12 {
		t.Errorf("seg %+v, want an open wait of 3.98s and 10 of 12 calls answered", seg)
	}
}
