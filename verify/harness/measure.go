package harness

import (
	"bufio"
	"cmp"
	"context"
	"io"
	"net/http"
	"os"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/flurryid/flurry/verify/checker"
	"github.com/flurryid/flurry/verify/harness/oplog"
)

// ---- restarts: time to the first ID

// RestartTime is how long a restarted node took, from its process's start, to
// answer a request for one ID of a namespace.
type RestartTime struct {
	Node, Namespace string
	// Kind says how the node was restarted ("SIGKILL, restart", ...).
	Kind string
	// Behind is how far the restarted node's clock stood behind the IDs it issued
	// before: it must wait that long (it refuses rather than issue below them).
	Behind time.Duration
	// At is when the process was started.
	At time.Time
	// First is the time from At to the first answer, or to when probing stopped
	// when no answer came (Answered false).
	First    time.Duration
	Answered bool
	// Last is the class of the last failed request before the answer ("" when the
	// first request was answered).
	Last string
	// Cut says why probing stopped without an answer: the node was restarted
	// again, the run ended, or the probe's limit passed.
	Cut string
}

// prober asks a restarted node for one ID of every namespace, from the first
// client host, every probeEvery until it answers, so that the time to the first ID
// does not depend on when the workload's clients happen to come by. Its IDs go to
// the checker (as node's ops, out of the availability figures).
type prober struct {
	c     *Cluster
	ctx   context.Context
	limit time.Duration // probing a restart stops this long after the process started
	ops   func(checker.Op)

	wg  sync.WaitGroup
	mu  sync.Mutex
	out []RestartTime
}

const probeEvery = 20 * time.Millisecond

// start probes node n, started at at, in the background.
func (p *prober) start(n *Node, kind restart, at time.Time) {
	for _, ns := range allNamespaces() {
		p.wg.Go(func() { p.one(n, kind, at, ns) })
	}
}

// wait waits for every probe (they end by themselves, at the latest when p.ctx ends).
func (p *prober) wait() []RestartTime {
	p.wg.Wait()
	p.mu.Lock()
	defer p.mu.Unlock()
	out := slices.Clone(p.out)
	nss := allNamespaces()
	slices.SortStableFunc(out, func(a, b RestartTime) int {
		return cmp.Or(a.At.Compare(b.At), cmp.Compare(slices.Index(nss, a.Namespace), slices.Index(nss, b.Namespace)))
	})
	return out
}

func (p *prober) one(n *Node, kind restart, at time.Time, ns string) {
	hc := httpClient(p.c.ClientHosts[0], 2*time.Second)
	rt := RestartTime{Node: n.Name, Namespace: ns, Kind: kind.kind, At: at}
	if snowflakeNS(ns) {
		// Only a snowflake namespace issues from the node's clock: redisgen reads
		// Redis's, a segment namespace none.
		rt.Behind = kind.behind
	}
	url := n.URL() + "/v1/" + ns + "/next?count=1&format=text"
	deadline := at.Add(p.limit)
	for {
		if p.ctx.Err() != nil {
			rt.Cut = "the run ended"
			break
		}
		if time.Now().After(deadline) {
			rt.Cut = "probing stopped"
			break
		}
		// Only this process's answer counts: a request sent before a restart is
		// answered by the process it was sent to, or by none.
		if !n.Proc.StartedAt().Equal(at) {
			rt.Cut = "the node was restarted again"
			break
		}
		start := time.Now()
		ids, errText := fetchIDs(p.ctx, hc, url)
		end := time.Now()
		if errText == "" {
			rt.First, rt.Answered = end.Sub(at), true
			p.ops(checker.Op{Client: "probe", Node: n.Name, Namespace: ns, Start: start, End: end, IDs: ids, NoAvailability: true})
			break
		}
		rt.Last = errText
		t := time.NewTimer(probeEvery)
		select {
		case <-p.ctx.Done():
		case <-t.C:
		}
		t.Stop()
	}
	if !rt.Answered {
		rt.First = time.Since(at)
	}
	p.mu.Lock()
	p.out = append(p.out, rt)
	p.mu.Unlock()
}

// fetchIDs asks url for IDs in text form; on success the error class is "".
func fetchIDs(ctx context.Context, hc *http.Client, url string) ([]int64, string) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return nil, err.Error()
	}
	resp, err := hc.Do(req)
	if err != nil {
		return nil, oplog.NetClass(err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
	if err != nil {
		return nil, "read: " + oplog.NetClass(err)
	}
	if resp.StatusCode != http.StatusOK {
		return nil, oplog.HTTPClass(resp.StatusCode, body)
	}
	var ids []int64
	for _, f := range strings.Fields(string(body)) {
		v, err := strconv.ParseInt(f, 10, 64)
		if err != nil {
			return nil, "bad body: " + strconv.Quote(f)
		}
		ids = append(ids, v)
	}
	if len(ids) == 0 {
		return nil, "empty body"
	}
	return ids, ""
}

// ---- the Go client's calls

// call is one op of the Go-client workload, reduced to what the report needs.
type call struct {
	caller, ns, node, err string
	start, end            time.Time
	ids                   int
}

// Calls sums the Go-client workload's Next calls of one namespace.
type Calls struct {
	// Calls is how many Next calls ended (answered or failed), Answered how many
	// returned an ID.
	Calls, Answered int64
	// Errors counts failed calls by class.
	Errors map[string]int64
	// Wait is the longest time a caller waited for an ID: from the start of a call
	// (or of the first of a run of failed calls) to the end of the call that
	// returned one; WaitFrom is when it began and WaitCaller who waited. Open is
	// true when the caller was still waiting when the run ended.
	Wait       time.Duration
	WaitFrom   time.Time
	WaitCaller string
	Open       bool
}

// Availability is the fraction of calls that returned an ID.
func (c Calls) Availability() float64 {
	if c.Calls == 0 {
		return 0
	}
	return float64(c.Answered) / float64(c.Calls)
}

// sumCalls sums the calls per namespace. A caller's ops come in the order it made
// them (runs of calls answered at once from the buffer are one op; a call that
// waited, or the first answered after a failure, is an op of its own:
// fhclient -mode client).
func sumCalls(calls []call) map[string]*Calls {
	out := map[string]*Calls{}
	type key struct{ caller, ns string }
	streams := map[key][]call{}
	for _, c := range calls {
		k := key{c.caller, c.ns}
		streams[k] = append(streams[k], c)
	}
	for k, s := range streams {
		sum := out[k.ns]
		if sum == nil {
			sum = &Calls{Errors: map[string]int64{}}
			out[k.ns] = sum
		}
		slices.SortStableFunc(s, func(a, b call) int { return a.start.Compare(b.start) })
		var since time.Time // start of the failed calls not yet followed by an ID
		note := func(from, to time.Time, open bool) {
			if d := to.Sub(from); d > sum.Wait {
				sum.Wait, sum.WaitFrom, sum.WaitCaller, sum.Open = d, from, k.caller, open
			}
		}
		for _, c := range s {
			if c.err != "" {
				sum.Calls++
				sum.Errors[c.err]++
				if since.IsZero() {
					since = c.start
				}
				continue
			}
			sum.Calls += int64(c.ids)
			sum.Answered += int64(c.ids)
			if c.ids == 1 {
				from := c.start
				if !since.IsZero() {
					from = since
				}
				note(from, c.end, false)
			}
			since = time.Time{}
		}
		if !since.IsZero() {
			note(since, s[len(s)-1].end, true)
		}
	}
	return out
}

// ---- refusals in the nodes' logs

// logRefusal is a refused request as a node's log tells it: the generator's own
// error, which the 503 answer leaves out.
type logRefusal struct {
	node, ns string
	at       time.Time
	err      string
}

// refusedLine is the message flurry serve logs (at most once a second per
// namespace, and not twice in a row) when a namespace cannot issue.
const refusedLine = "a request was refused: the namespace cannot issue"

// readRefusals reads node's refusals from its log (lines stamped by Proc.Stamp).
func readRefusals(r io.Reader, node string) []logRefusal {
	var out []logRefusal
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 0, 1<<16), 1<<20)
	for sc.Scan() {
		line := sc.Text()
		stamp, rest, ok := strings.Cut(line, " ")
		if !ok || !strings.Contains(rest, refusedLine) {
			continue
		}
		at, err := time.Parse(StampFormat, stamp)
		if err != nil {
			continue
		}
		lr := logRefusal{node: node, at: at, ns: attr(rest, "namespace"), err: attr(rest, "err")}
		if lr.ns != "" {
			out = append(out, lr)
		}
	}
	return out
}

// attr returns the value of key=value in a flurry log line: quoted (Go syntax) or
// up to the next space or closing parenthesis.
func attr(line, key string) string {
	i := strings.Index(line, " "+key+"=")
	if i < 0 {
		i = strings.Index(line, "("+key+"=")
	}
	if i < 0 {
		return ""
	}
	v := line[i+len(key)+2:]
	if strings.HasPrefix(v, `"`) {
		q, err := strconv.QuotedPrefix(v)
		if err != nil {
			return ""
		}
		s, _ := strconv.Unquote(q)
		return s
	}
	if j := strings.IndexAny(v, " )"); j >= 0 {
		v = v[:j]
	}
	return v
}

// nodeRefusals reads the refusals of every node's log.
func (c *Cluster) nodeRefusals() []logRefusal {
	var out []logRefusal
	for _, n := range c.Nodes {
		f, err := os.Open(n.Proc.Log)
		if err != nil {
			continue
		}
		out = append(out, readRefusals(f, n.Name)...)
		f.Close()
	}
	slices.SortStableFunc(out, func(a, b logRefusal) int { return a.at.Compare(b.at) })
	return out
}

// Causes of a refusal, by the generator's error text.
const (
	CauseBudget  = "outage budget spent: the lease store has not confirmed a reservation"
	CauseRenewal = "lease not renewed in time: another process may hold the value"
	CauseLost    = "lease lost"
	CauseNoValue = "no node value held yet (acquiring)"
	CauseBehind  = "clock behind the node's high-water mark"
	CauseClosing = "shutting down"
	CauseSegment = "no range buffered and no segment store answers"
	CauseRedis   = "Redis did not answer"
)

// refusalCause classifies a generator's error by its text: the words of flurry's
// errors, as docs/leases.md and the generator state them.
func refusalCause(text string) string {
	t := strings.ToLower(text)
	switch {
	case strings.Contains(t, "outage budget"),
		strings.Contains(t, "reserved window ends at") && strings.Contains(t, "has not confirmed"):
		return CauseBudget
	case strings.Contains(t, "not renewed in time"):
		return CauseRenewal
	case strings.Contains(t, "lease was lost"), strings.Contains(t, "lost the node value"):
		return CauseLost
	case strings.Contains(t, "no node value granted"):
		return CauseNoValue
	case strings.Contains(t, "clock moved backwards"), strings.Contains(t, "high-water mark"), strings.Contains(t, "clock behind"):
		return CauseBehind
	case strings.Contains(t, "closed"), strings.Contains(t, "shutting down"):
		return CauseClosing
	case strings.Contains(t, "segment"):
		return CauseSegment
	case strings.Contains(t, "redis"):
		return CauseRedis
	}
	return oplog.Reason(text)
}

// causes counts the causes of ns's refusals logged by node (any node when "")
// from from to to, most frequent first, as "cause ×n" joined by "; ".
func causes(rs []logRefusal, ns, node string, from, to time.Time) string {
	count := map[string]int{}
	var order []string
	for _, r := range rs {
		if r.ns != ns || (node != "" && r.node != node) || r.at.Before(from) || r.at.After(to) {
			continue
		}
		c := refusalCause(r.err)
		if count[c] == 0 {
			order = append(order, c)
		}
		count[c]++
	}
	slices.SortStableFunc(order, func(a, b string) int { return count[b] - count[a] })
	var parts []string
	for _, c := range order {
		parts = append(parts, c+" ×"+strconv.Itoa(count[c]))
	}
	return strings.Join(parts, "; ")
}
