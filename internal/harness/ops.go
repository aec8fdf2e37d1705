package harness

import (
	"bufio"
	"fmt"
	"io"
	"strconv"
	"strings"
	"time"

	"github.com/flurryid/flurry/internal/checker"
)

// ReadOps reads an op file written by fhclient, calling f for each op. A line is
//
//	client \t node \t ns \t start_unix_ns \t end_unix_ns \t runs \t err
//
// where runs is "-" or first+count[,first+count...] (runs of consecutive IDs) and err
// is "-" for an answered request. A truncated last line (a killed client) is ignored.
func ReadOps(r io.Reader, f func(checker.Op)) error {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 0, 1<<16), 1<<26)
	line := 0
	for sc.Scan() {
		line++
		t := sc.Text()
		p := strings.SplitN(t, "\t", 7)
		if len(p) != 7 {
			continue // truncated
		}
		s, err1 := strconv.ParseInt(p[3], 10, 64)
		e, err2 := strconv.ParseInt(p[4], 10, 64)
		if err1 != nil || err2 != nil {
			return fmt.Errorf("ops line %d: bad times", line)
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
				if !ok || err1 != nil || err2 != nil || n < 1 {
					return fmt.Errorf("ops line %d: bad run %q", line, run)
				}
				for k := range n {
					op.IDs = append(op.IDs, first+int64(k))
				}
			}
		}
		f(op)
	}
	return sc.Err()
}
