package oplog

import (
	"bytes"
	"errors"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/flurryid/flurry/verify/checker"
)

func roundTrip(t *testing.T, ops []checker.Op) []checker.Op {
	t.Helper()
	var b []byte
	for _, op := range ops {
		b = Append(b, op)
	}
	var got []checker.Op
	if err := Read(bytes.NewReader(b), func(op checker.Op) { got = append(got, op) }); err != nil {
		t.Fatalf("Read(%q): %v", b, err)
	}
	return got
}

// TestRoundTrip: what Append writes, Read gives back: IDs in order (runs and
// single IDs, descending and repeated ones too), times to the nanosecond, errors.
func TestRoundTrip(t *testing.T) {
	t0 := time.Unix(1795000000, 123456789)
	ops := []checker.Op{
		{Client: "c1", Node: "n1", Namespace: "sfe", Start: t0, End: t0.Add(time.Millisecond), IDs: []int64{5, 6, 7, 100, 99, 99, 1<<63 - 1}},
		{Client: "c2", Node: "n3", Namespace: "seg", Start: t0, End: t0.Add(2 * time.Second), Err: "503 namespace seg\thas no IDs\nbuffered"},
		{Client: "c2", Node: "n2", Namespace: "rg", Start: t0, End: t0, IDs: []int64{1}},
	}
	got := roundTrip(t, ops)
	if len(got) != len(ops) {
		t.Fatalf("%d ops back, want %d", len(got), len(ops))
	}
	ops[1].Err = "503 namespace seg has no IDs buffered"
	for i := range ops {
		if !got[i].Start.Equal(ops[i].Start) || !got[i].End.Equal(ops[i].End) {
			t.Errorf("op %d: times %v %v, want %v %v", i, got[i].Start, got[i].End, ops[i].Start, ops[i].End)
		}
		got[i].Start, got[i].End, ops[i].Start, ops[i].End = time.Time{}, time.Time{}, time.Time{}, time.Time{}
		if !reflect.DeepEqual(got[i], ops[i]) {
			t.Errorf("op %d: %+v, want %+v", i, got[i], ops[i])
		}
	}
}

// TestCompact: a batch of consecutive IDs is one run on the line.
func TestCompact(t *testing.T) {
	ids := make([]int64, 1000)
	for i := range ids {
		ids[i] = 250644847881617408 + int64(i)
	}
	line := string(Append(nil, checker.Op{Client: "c", Node: "n", Namespace: "x", IDs: ids}))
	if !strings.Contains(line, "\t250644847881617408+1000\t") {
		t.Errorf("line %q has not one run", line)
	}
}

// TestReadBad: a truncated last line is skipped; malformed runs and times are errors.
func TestReadBad(t *testing.T) {
	n := 0
	if err := Read(strings.NewReader("c\tn\tx\t1\t2\t5+2\t-\nc\tn\tx\t1\t2\t5+"), func(checker.Op) { n++ }); err != nil || n != 1 {
		t.Errorf("truncated last line: %d ops, %v", n, err)
	}
	for _, bad := range []string{
		"c\tn\tx\t1\t2\t5+0\t-\n",
		"c\tn\tx\t1\t2\t5\t-\n",
		"c\tn\tx\t1\t2\t9223372036854775807+2\t-\n",
		"c\tn\tx\t1\t2\t5+99999999999\t-\n",
		"c\tn\tx\tz\t2\t5+1\t-\n",
	} {
		if err := Read(strings.NewReader(bad), func(checker.Op) {}); err == nil {
			t.Errorf("Read(%q) gave no error", bad)
		}
	}
}

// FuzzRead: any input gives ops or an error, never a panic, and what Read accepts
// survives Append and Read again unchanged.
func FuzzRead(f *testing.F) {
	f.Add("c1\tn1\tsfe\t1\t2\t5+3,100+1\t-\n")
	f.Add("c\tn\tx\t1\t2\t-\t503 x\n")
	f.Add("\t\t\t\t\t\t\n")
	f.Fuzz(func(t *testing.T, s string) {
		var ops []checker.Op
		if err := Read(strings.NewReader(s), func(op checker.Op) { ops = append(ops, op) }); err != nil {
			return
		}
		var b []byte
		for _, op := range ops {
			b = Append(b, op)
		}
		var again []checker.Op
		if err := Read(bytes.NewReader(b), func(op checker.Op) { again = append(again, op) }); err != nil {
			t.Fatalf("re-reading %q: %v", b, err)
		}
		if len(again) != len(ops) {
			t.Fatalf("%d ops, then %d", len(ops), len(again))
		}
		for i := range ops {
			if !reflect.DeepEqual(ops[i].IDs, again[i].IDs) || !ops[i].Start.Equal(again[i].Start) {
				t.Fatalf("op %d changed: %+v -> %+v", i, ops[i], again[i])
			}
		}
	})
}

// TestAsked: an op of a buffering client carries when its IDs were asked for, as
// an eighth field; a line of seven fields has none.
func TestAsked(t *testing.T) {
	t0 := time.Unix(1795000000, 5)
	ops := []checker.Op{
		{Client: "c1-go-0-1", Node: "n2", Namespace: "sfe", Asked: t0.Add(-time.Second), Start: t0, End: t0.Add(time.Millisecond), IDs: []int64{7, 8}},
		{Client: "c1", Node: "n2", Namespace: "sfe", Asked: t0, Start: t0, End: t0, Err: "timeout"},
	}
	line := string(Append(nil, ops[1]))
	if strings.Count(line, "\t") != 6 {
		t.Errorf("Asked equal to Start written: %q", line)
	}
	got := roundTrip(t, ops)
	if !got[0].Asked.Equal(ops[0].Asked) || !got[1].Asked.IsZero() {
		t.Errorf("Asked read back as %v and %v, want %v and zero", got[0].Asked, got[1].Asked, ops[0].Asked)
	}
	if got[0].Err != "" || got[1].Err != "timeout" {
		t.Errorf("errors %q %q", got[0].Err, got[1].Err)
	}
	if err := Read(strings.NewReader("c\tn\tx\t1\t2\t5+1\t-\tz\n"), func(checker.Op) {}); err == nil {
		t.Error("a bad asked time gave no error")
	}
}

// TestClasses: failures are named by kind, without addresses, and flurry's 503
// text without its advice, so that the report counts them by class.
func TestClasses(t *testing.T) {
	for _, tc := range []struct {
		status     int
		body, want string
	}{
		{503, `{"error":"namespace sfe holds no valid lease on a node value (retry shortly; it resumes once the lease is renewed)"}`, "503 namespace sfe holds no valid lease on a node value"},
		{503, "namespace seg has no IDs buffered and no segment store answers\n", "503 namespace seg has no IDs buffered and no segment store answers"},
		{503, `{"error":"namespace sfe stands behind its clock's high-water mark by 29.1s (retry after Retry-After)"}`, "503 namespace sfe stands behind its clock's high-water mark"},
		{503, `{"error":"namespace seg is held by 3 owners (retry)"}`, "503 namespace seg is held by 3 owners"},
		{400, `{"error":"count: must be 1..100000"}`, "400 count"},
	} {
		if got := HTTPClass(tc.status, []byte(tc.body)); got != tc.want {
			t.Errorf("HTTPClass(%d, %q) = %q, want %q", tc.status, tc.body, got, tc.want)
		}
	}
	for _, tc := range []struct{ msg, want string }{
		{"dial tcp 10.213.0.9:8080: connect: connection refused", "connection refused"},
		{"read tcp 10.213.0.11:5000->10.213.0.9:8080: read: connection reset by peer", "connection reset"},
		{`Get "http://10.213.0.9:8080/v1/sfe/next": context deadline exceeded (Client.Timeout exceeded while awaiting headers)`, "timeout"},
		{"unexpected EOF", "connection closed (EOF)"},
	} {
		if got := NetClass(errors.New(tc.msg)); got != tc.want {
			t.Errorf("NetClass(%q) = %q, want %q", tc.msg, got, tc.want)
		}
	}
}
