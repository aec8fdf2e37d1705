package server

import (
	"context"
	"net/http"
	"strconv"
	"time"

	"github.com/flurryid/flurry/segment"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"
)

// metrics are the server's Prometheus metrics, in a registry of its own. Request
// latencies are histograms observed per request; everything else is read from the
// generators' Stats at scrape time by a Collector, so the hot path pays for one
// histogram observation and one atomic add.
type metrics struct {
	reg     *prometheus.Registry
	h       http.Handler
	latency *prometheus.HistogramVec
	errors  *prometheus.CounterVec
}

// nsMetrics are a namespace's pre-resolved observers.
type nsMetrics struct {
	next, rpc, leaf prometheus.Observer
}

func newMetrics(s *Server) *metrics {
	m := &metrics{reg: prometheus.NewRegistry()}
	m.latency = prometheus.NewHistogramVec(prometheus.HistogramOpts{
		Name:    "flurry_request_duration_seconds",
		Help:    "Time to serve an ID request, by namespace and route (next: GET /v1/{ns}/next, rpc: IDService.Next, leaf: Leaf's get routes, tinyid: tinyid's routes; Leaf's table and tinyid's biz types as namespaces leaf:TAG and tinyid:BIZ).",
		Buckets: []float64{25e-6, 50e-6, 100e-6, 250e-6, 500e-6, 1e-3, 2e-3, 5e-3, 10e-3, 50e-3, 0.25, 1},
	}, []string{"namespace", "route"})
	m.errors = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "flurry_request_errors_total",
		Help: "ID requests answered with an error, by namespace and HTTP status.",
	}, []string{"namespace", "status"})
	for _, ns := range s.order {
		ns.metrics = nsMetrics{
			next: m.latency.WithLabelValues(ns.name, "next"),
			rpc:  m.latency.WithLabelValues(ns.name, "rpc"),
			leaf: m.latency.WithLabelValues(ns.name, "leaf"),
		}
	}
	// The tags of Leaf's table and tinyid's biz types are counted as namespaces
	// named "leaf:TAG" and "tinyid:BIZ" (no namespace name has a colon), on the
	// routes "leaf" and "tinyid".
	for _, ts := range []*tagSet{s.leafTags, s.tinySet()} {
		if ts != nil {
			ts.observe = func(tag string) prometheus.Observer { return m.latency.WithLabelValues(ts.what+":"+tag, ts.what) }
		}
	}
	m.reg.MustRegister(m.latency, m.errors, &collector{s: s, d: newDescs()},
		collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	m.h = promhttp.HandlerFor(m.reg, promhttp.HandlerOpts{})
	return m
}

// countCompat counts a failed request of Leaf's table mode or of tinyid under
// its subject (tagSet.subject), with the HTTP status flurry's own routes give
// the same failure: Leaf answers 500 and tinyid 200 whatever went wrong, which
// would tell an alert nothing (404 an unknown tag, 401 a bad token, 503 no
// store answered).
func (m *metrics) countCompat(subject string, status int) {
	m.errors.WithLabelValues(subject, strconv.Itoa(status)).Inc()
}

func desc(name, help string) *prometheus.Desc {
	return prometheus.NewDesc(name, help, []string{"namespace"}, nil)
}

// collector reads the namespaces' state at scrape time.
type collector struct {
	s *Server
	d *descs
}

// descs are the descriptions of the metrics the collector reads at scrape time.
type descs struct {
	dIssued       *prometheus.Desc
	dOverflow     *prometheus.Desc
	dWaited       *prometheus.Desc
	dBehind       *prometheus.Desc
	dBehindGap    *prometheus.Desc
	dBehindErrs   *prometheus.Desc
	dLeaseHeld    *prometheus.Desc
	dLeaseValue   *prometheus.Desc
	dLeaseLeft    *prometheus.Desc
	dLeaseRenew   *prometheus.Desc
	dLeaseFail    *prometheus.Desc
	dLeaseLoss    *prometheus.Desc
	dSegFetch     *prometheus.Desc
	dSegClaim     *prometheus.Desc
	dSegFail      *prometheus.Desc
	dSegBuffered  *prometheus.Desc
	dSegNextReady *prometheus.Desc
	dSegRunway    *prometheus.Desc
	dSegRate      *prometheus.Desc
	dSegStep      *prometheus.Desc
	dLifeLeft     *prometheus.Desc
	dReady        *prometheus.Desc
	dRegionOK     *prometheus.Desc
	dRegionFail   *prometheus.Desc
	dRegionClash  *prometheus.Desc
}

func newDescs() *descs {
	return &descs{
		dIssued:       desc("flurry_ids_issued_total", "IDs issued since the server started."),
		dOverflow:     desc("flurry_sequence_overflow_waits_total", "Waits for the next tick because a tick's sequence ran out (snowflake)."),
		dWaited:       desc("flurry_sequence_wait_seconds_total", "Time spent in those waits and in clock step-back waits (snowflake)."),
		dBehind:       desc("flurry_clock_behind_events_total", "Times the clock was found behind the last issued tick beyond the allowed drift (snowflake)."),
		dBehindGap:    desc("flurry_clock_behind_max_gap_seconds", "The largest clock-behind gap seen (snowflake)."),
		dBehindErrs:   desc("flurry_clock_behind_errors_total", "Requests refused because the clock was behind (snowflake)."),
		dLeaseHeld:    desc("flurry_lease_held", "1 while the namespace holds a lease on a node value, else 0."),
		dLeaseValue:   desc("flurry_lease_value", "The leased node value."),
		dLeaseLeft:    desc("flurry_lease_window_left_seconds", "How much longer the namespace may issue if its lease store answers no more: the outage budget left (the reservation's end, or the fence, minus now)."),
		dLeaseRenew:   desc("flurry_lease_renewals_total", "Successful lease renewals."),
		dLeaseFail:    desc("flurry_lease_failures_total", "Failed lease renewals."),
		dLeaseLoss:    desc("flurry_lease_losses_total", "Leases lost."),
		dSegFetch:     desc("flurry_segment_fetches_total", "Segment ranges taken from the stores."),
		dSegClaim:     desc("flurry_segment_claimed_total", "Segment ranges that were handed-back ranges."),
		dSegFail:      desc("flurry_segment_fetch_failures_total", "Segment fetch attempts where no store answered."),
		dSegBuffered:  desc("flurry_segment_buffered_ids", "IDs servable without any store: the rest of the current range plus the next."),
		dSegNextReady: desc("flurry_segment_next_ready", "1 when the next range is buffered."),
		dSegRunway:    desc("flurry_segment_runway_seconds", "How long the buffered IDs last at the recent rate (0 while the rate is unknown)."),
		dSegRate:      desc("flurry_segment_rate_ids_per_second", "The recent rate of the segment namespace."),
		dSegStep:      desc("flurry_segment_step", "The step the next fresh range is asked with."),
		dLifeLeft:     desc("flurry_time_field_life_left_seconds", "Time until the layout's time field runs out."),
		dReady:        desc("flurry_namespace_ready", "1 when the namespace can issue now (snowflake and segment; what /readyz checks)."),
		dRegionOK:     prometheus.NewDesc("flurry_region_claim_verified", "1 when the registry confirmed the region's claim on its value at the last check, else 0 (the registry down: issuing on the cached claim; or another region's claim).", []string{"region"}, nil),
		dRegionFail:   prometheus.NewDesc("flurry_region_verify_failures_total", "Checks of the region's claim that failed: the registry did not answer, or held another region's claim.", []string{"region"}, nil),
		dRegionClash:  prometheus.NewDesc("flurry_region_claim_conflict", "1 when the last check found another region's claim on this region's value in the registry (two regions issuing the same IDs), else 0.", []string{"region"}, nil),
	}
}

func (d *descs) all() []*prometheus.Desc {
	return []*prometheus.Desc{d.dIssued, d.dOverflow, d.dWaited, d.dBehind, d.dBehindGap, d.dBehindErrs, d.dLeaseHeld, d.dLeaseValue, d.dLeaseLeft, d.dLeaseRenew, d.dLeaseFail, d.dLeaseLoss, d.dSegFetch, d.dSegClaim, d.dSegFail, d.dSegBuffered, d.dSegNextReady, d.dSegRunway, d.dSegRate, d.dSegStep, d.dLifeLeft, d.dReady, d.dRegionOK, d.dRegionFail, d.dRegionClash}
}

// Describe implements prometheus.Collector.
func (c *collector) Describe(ch chan<- *prometheus.Desc) {
	for _, d := range c.d.all() {
		ch <- d
	}
}

func b2f(b bool) float64 {
	if b {
		return 1
	}
	return 0
}

// Collect implements prometheus.Collector: it reads every namespace's state now.
func (c *collector) Collect(ch chan<- prometheus.Metric) {
	now := time.Now()
	for _, ns := range c.s.order {
		n := ns.name
		g := func(d *prometheus.Desc, v float64) {
			ch <- prometheus.MustNewConstMetric(d, prometheus.GaugeValue, v, n)
		}
		cnt := func(d *prometheus.Desc, v float64) {
			ch <- prometheus.MustNewConstMetric(d, prometheus.CounterValue, v, n)
		}
		cnt(c.d.dIssued, float64(ns.issued.Load()))
		if ns.layout != nil {
			g(c.d.dLifeLeft, ns.layout.Lifetime().Sub(now).Seconds())
		}
		if ns.gen != nil {
			st := ns.gen.Stats()
			cnt(c.d.dOverflow, float64(st.OverflowWaits))
			cnt(c.d.dWaited, st.Waited.Seconds())
			cnt(c.d.dBehind, float64(st.ClockBehind))
			g(c.d.dBehindGap, st.MaxBehind.Seconds())
			cnt(c.d.dBehindErrs, float64(st.BehindErrors))
		}
		if ns.sess != nil {
			st := ns.sess.Status()
			g(c.d.dLeaseHeld, b2f(st.Held))
			g(c.d.dLeaseValue, float64(st.Value))
			g(c.d.dLeaseLeft, st.BudgetLeft.Seconds())
			cnt(c.d.dLeaseRenew, float64(st.Renewals))
			cnt(c.d.dLeaseFail, float64(st.Failures))
			cnt(c.d.dLeaseLoss, float64(st.Losses))
		}
		if ns.alloc != nil {
			c.segment(ch, n, ns.alloc.Stats())
		}
		if ns.sess != nil || ns.alloc != nil {
			ok, _ := c.s.ready(context.Background(), ns)
			g(c.d.dReady, b2f(ok))
		}
	}
	if g := c.s.region; g != nil {
		ch <- prometheus.MustNewConstMetric(c.d.dRegionOK, prometheus.GaugeValue, b2f(g.verified.Load()), g.opts.Name)
		ch <- prometheus.MustNewConstMetric(c.d.dRegionFail, prometheus.CounterValue, float64(g.failures.Load()), g.opts.Name)
		ch <- prometheus.MustNewConstMetric(c.d.dRegionClash, prometheus.GaugeValue, b2f(g.conflict.Load()), g.opts.Name)
	}
	for _, ts := range []*tagSet{c.s.leafTags, c.s.tinySet()} {
		if ts == nil {
			continue
		}
		for _, ta := range ts.served() {
			n := ts.what + ":" + ta.tag
			ch <- prometheus.MustNewConstMetric(c.d.dIssued, prometheus.CounterValue, float64(ta.issued.Load()), n)
			c.segment(ch, n, ta.alloc.Stats())
		}
	}
}

// segment sends a segment allocator's metrics under the namespace label n.
func (c *collector) segment(ch chan<- prometheus.Metric, n string, st segment.Stats) {
	g := func(d *prometheus.Desc, v float64) {
		ch <- prometheus.MustNewConstMetric(d, prometheus.GaugeValue, v, n)
	}
	cnt := func(d *prometheus.Desc, v float64) {
		ch <- prometheus.MustNewConstMetric(d, prometheus.CounterValue, v, n)
	}
	cnt(c.d.dSegFetch, float64(st.Fetches))
	cnt(c.d.dSegClaim, float64(st.Claimed))
	cnt(c.d.dSegFail, float64(st.Failures))
	g(c.d.dSegBuffered, float64(st.Buffered))
	g(c.d.dSegNextReady, b2f(st.NextReady))
	g(c.d.dSegRunway, st.Runway.Seconds())
	g(c.d.dSegRate, st.Rate)
	g(c.d.dSegStep, float64(st.Step))
}
