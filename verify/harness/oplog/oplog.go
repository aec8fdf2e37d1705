// Package oplog is the fault harness's record of client requests: one line per
// request, written by the workload (fhclient) and read into the checker.
//
// A line is
//
//	client \t node \t ns \t start_unix_ns \t end_unix_ns \t runs \t err [\t asked_unix_ns]
//
// where runs is "-" or first+count[,first+count...] (runs of consecutive IDs, in the
// order received: a batch of 1,000 consecutive IDs is one run), err is "-" for
// an answered request, else the error's class with tabs and newlines made spaces
// (HTTPClass, NetClass), and asked, written only when it is before start, is when
// the node was asked for the IDs (checker.Op.Asked: a client that buffers IDs hands
// them out after it fetched them).
package oplog

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"
	"time"

	"github.com/flurryid/flurry/verify/checker"
)

// Node names that a Go-client workload (fhclient -mode client) writes when it cannot
// name the node: NoNode for a failed call (the client tried every node), Untraced
// for an ID that no batch it saw from a node holds (a fault of the workload).
const (
	NoNode   = "-"
	Untraced = "untraced"
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
	if !op.Asked.IsZero() && op.Asked.Before(op.Start) {
		b = append(b, '\t')
		b = strconv.AppendInt(b, op.Asked.UnixNano(), 10)
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
// error naming its number. An empty eighth field is no Asked time.
func Read(r io.Reader, f func(checker.Op)) error {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 0, 1<<16), 1<<26)
	line := 0
	for sc.Scan() {
		line++
		p := strings.SplitN(sc.Text(), "\t", 8)
		if len(p) < 7 {
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
		if len(p) == 8 && p[7] != "" {
			a, err := strconv.ParseInt(p[7], 10, 64)
			if err != nil {
				return fmt.Errorf("oplog: line %d: bad asked time", line)
			}
			op.Asked = time.Unix(0, a)
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

// NetClass names a transport error by its kind, without addresses, so that the
// report counts failures by class: "timeout", "connection refused", "connection
// reset", "connection closed (EOF)", "no route", else the error's text.
func NetClass(err error) string {
	s := err.Error()
	switch {
	case errors.Is(err, context.DeadlineExceeded) || strings.Contains(s, "Client.Timeout") || strings.Contains(s, "i/o timeout") ||
		strings.Contains(s, "deadline exceeded"):
		return "timeout"
	case strings.Contains(s, "connection refused"):
		return "connection refused"
	case strings.Contains(s, "connection reset"):
		return "connection reset"
	case strings.Contains(s, "EOF"):
		return "connection closed (EOF)"
	case strings.Contains(s, "no route"):
		return "no route"
	}
	return s
}

// HTTPClass is an HTTP status and flurry's reason without its details: the JSON
// error (or the body) up to its first ": ", parenthesised advice removed, e.g. "503
// namespace sfe holds no valid lease on a node value".
func HTTPClass(status int, body []byte) string {
	msg := strings.TrimSpace(string(body))
	var e struct {
		Error string `json:"error"`
	}
	if json.Unmarshal(body, &e) == nil && e.Error != "" {
		msg = e.Error
	}
	return strconv.Itoa(status) + " " + Reason(msg)
}

// Reason is flurry's error message without its details: up to its first ": ",
// parenthesised advice and a " by <duration>" (how far a clock stands behind)
// removed, at most 120 bytes.
func Reason(msg string) string {
	msg = strings.TrimPrefix(strings.TrimSpace(msg), "error: ")
	if i := strings.Index(msg, ": "); i > 0 {
		msg = msg[:i]
	}
	for i := 0; ; {
		j := strings.Index(msg[i:], " by ")
		if j < 0 {
			break
		}
		j += i
		rest := msg[j+len(" by "):]
		k := strings.IndexAny(rest, " (")
		if k < 0 {
			k = len(rest)
		}
		if _, err := time.ParseDuration(rest[:k]); err == nil {
			msg = msg[:j] + rest[k:]
			continue
		}
		i = j + 1
	}
	for {
		i := strings.Index(msg, " (")
		j := strings.Index(msg, ")")
		if i < 0 || j < i {
			break
		}
		msg = msg[:i] + msg[j+1:]
	}
	if len(msg) > 120 {
		msg = msg[:120]
	}
	return strings.TrimSpace(msg)
}
