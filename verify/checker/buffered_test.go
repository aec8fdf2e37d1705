package checker

import "testing"

// TestAskedOrdersFromTheAsk: a client that buffers IDs hands them out after it
// asked the node for them, so two of its ops are ordered only when the earlier was
// handed out before the later's IDs were asked for. Two buffering clients on one
// node, each handing out a batch it fetched earlier, must not be reported.
func TestAskedOrdersFromTheAsk(t *testing.T) {
	c := New([]Namespace{{Name: "seg", Kind: Snowflake}})
	// n1 answered client B's batch (100..199) at 0 ms and client A's (200..299) at 10 ms.
	c.Add(Op{Client: "A", Node: "n1", Namespace: "seg", Asked: at(10), Start: at(20), End: at(30), IDs: seq(200, 10)})
	c.Add(Op{Client: "B", Node: "n1", Namespace: "seg", Asked: at(0), Start: at(40), End: at(50), IDs: seq(100, 10)})
	if r := c.Check(nil); !r.OK() {
		t.Fatalf("ops of two buffering clients reported: %+v", r.Namespaces[0].OrderExamples)
	}
	// An op whose IDs were asked for after A's were handed out must be above them.
	c.Add(Op{Client: "B", Node: "n1", Namespace: "seg", Asked: at(35), Start: at(60), End: at(70), IDs: seq(150, 10)})
	r := c.Check(nil)
	if ns := r.Namespaces[0]; ns.OrderViolations != 1 {
		t.Fatalf("%d order violations, want 1 (150 asked for after 209 was handed out)", ns.OrderViolations)
	}
	if v := r.Namespaces[0].OrderExamples[0]; v.Prev != 209 || v.Next != 150 || !v.Later.Asked.Equal(at(35)) {
		t.Errorf("example %+v, want 209 then 150 with Asked kept", v)
	}
}

// TestAskedPlacesLifetimes: a segment batch fetched before its node restarted and
// handed out after it belongs to the old process: it is compared with no op of
// the new one, whose fresh (here lower) range is fine.
func TestAskedPlacesLifetimes(t *testing.T) {
	c := New([]Namespace{{Name: "seg", Kind: Segment}})
	c.Restarted(Restart{Node: "n1", At: at(1000)})
	c.Add(Op{Client: "go", Node: "n1", Namespace: "seg", Asked: at(500), Start: at(1200), End: at(1300), IDs: seq(1000, 10)})
	c.Add(Op{Client: "go", Node: "n1", Namespace: "seg", Asked: at(1500), Start: at(1600), End: at(1700), IDs: seq(100, 10)})
	r := c.Check(nil)
	if ns := r.Namespaces[0]; ns.OrderViolations != 0 || ns.Unordered != 1 {
		t.Fatalf("%d order violations, %d unordered; want 0 and 1", ns.OrderViolations, ns.Unordered)
	}
}

// TestNoAvailability: an op left out of the availability figures still has its IDs
// counted and checked, but adds no request, answer, error class or delivery.
func TestNoAvailability(t *testing.T) {
	c := New([]Namespace{{Name: "seg", Kind: Segment}})
	c.Add(Op{Client: "c1", Node: "n1", Namespace: "seg", Start: at(0), End: at(10), IDs: seq(1, 10)})
	c.Add(Op{Client: "c1", Node: "n1", Namespace: "seg", Start: at(1000), End: at(1010), IDs: seq(11, 10)})
	c.Add(Op{Client: "probe", Node: "n2", Namespace: "seg", Start: at(400), End: at(500), IDs: seq(5, 2), NoAvailability: true})
	c.Add(Op{Client: "probe", Node: "n2", Namespace: "seg", Start: at(600), End: at(700), Err: "503 x", NoAvailability: true})
	c.Add(Op{Client: "go", Node: "-", Namespace: "seg", Start: at(600), End: at(700), Err: "timeout", NoAvailability: true})
	r := c.Check([]Window{{Name: "w", Start: at(0), End: at(2000)}})
	ns := r.Namespaces[0]
	if ns.Requests != 2 || ns.Answered != 2 || ns.IDs != 22 || len(ns.Errors) != 0 {
		t.Errorf("counts %+v errors %v; want 2 requests, 2 answered, 22 IDs, no error class", ns.Counts, ns.Errors)
	}
	if ns.Duplicates != 2 {
		t.Errorf("%d duplicates, want 2 (5 and 6 again)", ns.Duplicates)
	}
	if g := ns.Gap.Duration(); g != 1000*1e6 {
		t.Errorf("gap %v, want 1s: the aside op's delivery at 500 ms does not split it", g)
	}
	w := r.Windows[0].Namespaces[0]
	if w.Requests != 2 || w.IDs != 22 {
		t.Errorf("window counts %+v, want 2 requests and 22 IDs", w.Counts)
	}
	if len(ns.Nodes) != 2 {
		t.Errorf("nodes %+v, want n1 and n2 only: an aside op without IDs names no node", ns.Nodes)
	}
	for _, nd := range ns.Nodes {
		if nd.Node == "n2" && (nd.Requests != 0 || nd.IDs != 2) {
			t.Errorf("node n2 %+v, want no request and 2 IDs", nd.Counts)
		}
	}
}
