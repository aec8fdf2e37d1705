package harness

import (
	"fmt"
	"os"
	"strings"

	"github.com/flurryid/flurry/verify/checker"
	"github.com/flurryid/flurry/verify/harness/oplog"
)

// opFile is one client process's op log: raw requests, or the Go-client
// workload's calls (calls).
type opFile struct {
	path  string
	calls bool // the Go-client workload's
	proc  *Proc
}

// readOps reads every op log into the checker and into out: raw requests count
// for availability (out.raw, out.Requests); the Go-client workload's calls are
// checked with the rest but their availability is the callers' (out.calls). It
// returns how many IDs of calls no batch the client saw held: those are compared
// with no other op (they may come from any node), so checked for duplicates and
// range but not for order.
func readOps(files []opFile, ck *checker.Checker, out *Outcome) (untraced int, err error) {
	for _, of := range files {
		f, err := os.Open(of.path)
		if err != nil {
			return untraced, fmt.Errorf("%s wrote no ops (log %s): %w", of.proc.Name, of.proc.Log, err)
		}
		err = oplog.Read(f, func(op checker.Op) {
			if of.calls {
				op.NoAvailability = true
				if op.Node == oplog.Untraced {
					untraced += len(op.IDs)
					op.Node = fmt.Sprintf("%s (op %d)", oplog.Untraced, untraced)
				}
				ck.Add(op)
				out.calls = append(out.calls, call{caller: op.Client, ns: op.Namespace, node: op.Node, err: op.Err,
					start: op.Start, end: op.End, ids: len(op.IDs)})
				return
			}
			out.Requests++
			ck.Add(op)
			out.raw = append(out.raw, opMark{ns: op.Namespace, node: op.Node, err: op.Err, start: op.Start, end: op.End,
				refused: strings.HasPrefix(op.Err, "503"), answered: op.Err == ""})
		})
		f.Close()
		if err != nil {
			return untraced, err
		}
	}
	return untraced, nil
}
