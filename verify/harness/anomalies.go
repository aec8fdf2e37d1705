package harness

import (
	"fmt"
	"time"

	"github.com/flurryid/flurry/verify/checker"
)

// AnomalyLines describes each anomaly example of r in one line: namespace, what
// was wrong, the ops involved (client, node, times relative to the start of the
// load, and when a buffering client's IDs were asked for), and the fault whose
// window (plus grace) held the later op. A failing test prints them with its
// error, so the evidence survives where only the end of a log is kept (a CI
// summary), not only in the report.
func AnomalyLines(r checker.Result, faults []FaultRun, grace time.Duration) []string {
	rel := func(t time.Time) string {
		if t.IsZero() {
			return "-"
		}
		return fmt.Sprintf("T+%.3fs", t.Sub(r.Start).Seconds())
	}
	op := func(o checker.Op) string {
		s := fmt.Sprintf("%s→%s %s–%s", o.Client, o.Node, rel(o.Start), rel(o.End))
		if !o.Asked.IsZero() && o.Asked.Before(o.Start) {
			s += " asked " + rel(o.Asked)
		}
		if o.Err != "" {
			s += " err " + o.Err
		}
		return fmt.Sprintf("%s (%d IDs)", s, len(o.IDs))
	}
	during := func(t time.Time) string {
		for i := len(faults) - 1; i >= 0; i-- {
			fr := faults[i]
			if !fr.Start.IsZero() && !t.Before(fr.Start) && !t.After(fr.End.Add(grace)) {
				return fmt.Sprintf("during %q (%s)", fr.Fault.Name, fr.Fault.Kind)
			}
		}
		return "outside every fault window"
	}
	var lines []string
	for _, ns := range r.Namespaces {
		for _, d := range ns.DuplicateExamples {
			l := fmt.Sprintf("%s: ID %d received %d times:", ns.Name, d.ID, d.Count)
			for _, o := range d.Ops {
				l += " " + op(o) + ";"
			}
			if len(d.Ops) > 0 {
				l += " " + during(d.Ops[len(d.Ops)-1].End)
			}
			lines = append(lines, l)
		}
		for _, v := range ns.OrderExamples {
			how := "answered before the later op's IDs were asked for"
			switch {
			case v.Within:
				how = "in one op"
			case v.AcrossRestart:
				how += ", across a restart of the node"
			}
			lines = append(lines, fmt.Sprintf("%s: %d then %d on %s (%s): earlier %s, later %s; %s",
				ns.Name, v.Prev, v.Next, v.Node, how, op(v.Earlier), op(v.Later), during(v.Later.End)))
		}
		for _, o := range ns.OutOfRangeExamples {
			lines = append(lines, fmt.Sprintf("%s: ID %d %s: %s; %s", ns.Name, o.ID, o.Reason, op(o.Op), during(o.Op.End)))
		}
	}
	return lines
}
