// Package oplog is the fault harness's record of client requests: one line per
// request, written by the workload (fhclient) and read into the checker.
//
// A line is
//
//	client \t node \t ns \t start_unix_ns \t end_unix_ns \t runs \t err
//
// where runs is "-" or first+count[,first+count...] (runs of consecutive IDs, in the
// order received: a batch of 1,000 consecutive IDs is one run) and err is "-" for
// an answered request, else the error's class with tabs and newlines made spaces.
package oplog

import (
	"bufio"
	"fmt"
	"io"
	"strconv"
	"strings"
	"time"

	"github.com/flurryid/flurry/internal/checker"
)

// Append appends op's line to b.
func Append(b []byte, op checker.Op) []byte {
	b = append(b, field(op.Client)...)
	b = append(b, '\t')
	b = append(b, field(op.Node)...)
	b = append(b, '\t')
	b = append(b, field(op.Namespace)...)
	b = append(b, '\t')
	b = strconv.AppendInt(b, op.Start.UnixNano(), 10)
	b = append(b, '\t')
	b = strconv.AppendInt(b, op.End.UnixNano(), 10)
	b = append(b, '\t')
	ids := op.IDs
	if len(ids) == 0 {
		b = append(b, '-')
	}
	for i := 0; i < len(ids); {
		j := i + 1
		for j < len(ids) && ids[j-1] < 1<<63-1 && ids[j] == ids[j-1]+1 {
			j++
		}
		if i > 0 {
			b = append(b, ',')
		}
		b = strconv.AppendInt(b, ids[i], 10)
		b = append(b, '+')
		b = strconv.AppendInt(b, int64(j-i), 10)
		i = j
	}
	b = append(b, '\t')
	if op.Err == "" {
		b = append(b, '-')
	} else {
		b = append(b, field(op.Err)...)
	}
	return append(b, '\n')
}

// field makes s safe for a line: no tab or newline, and not empty.
func field(s string) string {
	if s == "" {
		return "?"
	}
	return strings.Map(func(r rune) rune {
		if r == '\t' || r == '\n' || r == '\r' {
			return ' '
		}
		return r
	}, s)
}

// MaxRun bounds one run's count, so that a corrupt line cannot ask for gigabytes.
const MaxRun = 10_000_000

// Read reads lines, calling f for each op. A line with fewer than 7 fields (the
// truncated last line of a killed client) is skipped; any other malformed line is an
// error naming its number.
func Read(r io.Reader, f func(checker.Op)) error {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 0, 1<<16), 1<<26)
	line := 0
	for sc.Scan() {
		line++
		p := strings.SplitN(sc.Text(), "\t", 7)
		if len(p) != 7 {
			continue
		}
		s, err1 := strconv.ParseInt(p[3], 10, 64)
		e, err2 := strconv.ParseInt(p[4], 10, 64)
		if err1 != nil || err2 != nil {
			return fmt.Errorf("oplog: line %d: bad times", line)
		}
		op := checker.Op{Client: p[0], Node: p[1], Namespace: p[2], Start: time.Unix(0, s), End: time.Unix(0, e)}
		if p[6] != "-" {
			op.Err = p[6]
		}
		if p[5] != "-" {
			for _, run := range strings.Split(p[5], ",") {
				a, b, ok := strings.Cut(run, "+")
				first, err1 := strconv.ParseInt(a, 10, 64)
				n, err2 := strconv.Atoi(b)
				if !ok || err1 != nil || err2 != nil || n < 1 || n > MaxRun || first > 1<<63-1-int64(n-1) {
					return fmt.Errorf("oplog: line %d: bad run %q", line, run)
				}
				for k := range n {
					op.IDs = append(op.IDs, first+int64(k))
				}
			}
		}
		f(op)
	}
	if err := sc.Err(); err != nil {
		return fmt.Errorf("oplog: %w", err)
	}
	return nil
}
