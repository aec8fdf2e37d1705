package testenv

import (
	"context"
	"fmt"
	"os"
	"testing"
	"time"
)

// An Outage is how a Proxy takes its service away.
type Outage int

// The outages of a Proxy.
const (
	Refuse Outage = iota + 1 // Proxy.Refuse: dials refused, open connections reset
	Hang                     // Proxy.Hang: nothing forwarded, nothing closed
	Drop                     // Proxy.Drop: as Hang, and the held connections stay silent
	Cut                      // Proxy.Cut: connections accepted and closed at once
)

// Outages lists every Outage, for tests that try each.
var Outages = []Outage{Refuse, Hang, Drop, Cut}

func (o Outage) String() string {
	switch o {
	case Refuse:
		return "refuse"
	case Hang:
		return "hang"
	case Drop:
		return "drop"
	case Cut:
		return "cut"
	}
	return fmt.Sprintf("Outage(%d)", int(o))
}

// Start applies o to p.
func (o Outage) Start(p *Proxy) {
	switch o {
	case Refuse:
		p.Refuse()
	case Hang:
		p.Hang()
	case Drop:
		p.Drop()
	case Cut:
		p.Cut()
	default:
		panic("testenv: unknown " + o.String())
	}
}

// RecoveryPlan is one outage of a store behind a Proxy with calls made throughout,
// as a lease session or a segment allocator makes them.
type RecoveryPlan struct {
	Outage Outage
	// For is how long the store is away.
	For time.Duration
	// Every is the pause between the end of one call and the start of the next.
	Every time.Duration
	// Timeout bounds each call, as a store's caller does (a lease session bounds a
	// renewal by its window, the server a segment fetch by fetch_timeout).
	Timeout time.Duration
	// GiveUp is how long after the store is back calls go on before the run stops
	// without a success.
	GiveUp time.Duration
	// Warm is how many calls run at once before the outage, so that the client's
	// pool holds that many connections when it starts; zero means one call.
	Warm int
}

// Recovery is what RecoverFrom saw.
type Recovery struct {
	Plan RecoveryPlan
	// Recovered is the time from the store's return (Proxy.Restore) to the end of
	// the first call that succeeded after it; negative when none did within GiveUp.
	Recovered time.Duration
	// Attempts counts the calls made after the return, up to and including the
	// first that succeeded; 0 when a call made before the return succeeded after
	// it.
	Attempts int
	// Calls counts the calls that ended during the outage; Failed those of them that
	// failed.
	Calls, Failed int
	// Dials counts the connections the proxy accepted during the outage: the
	// client's connection attempts, except those Refuse turned away at the kernel.
	Dials int
	// FirstErr and LastErr are the first and the last error of the run.
	FirstErr, LastErr error
}

func (r Recovery) String() string {
	rec := "never"
	if r.Recovered >= 0 {
		rec = r.Recovered.Round(time.Millisecond).String()
	}
	return fmt.Sprintf("%-6s %v: recovered in %s (calls made after the return: %d); during the outage %d calls (%d failed), %d connections accepted; last error: %v",
		r.Plan.Outage, r.Plan.For, rec, r.Attempts, r.Calls, r.Failed, r.Dials, r.LastErr)
}

// RecoverFrom makes plan.Warm successful calls at once through p, then takes the store away as
// plan says for plan.For while calling call every plan.Every, each call bounded by
// plan.Timeout. A timer brings the store back (Proxy.Restore) when plan.For has
// passed, whatever call is running then, and calls go on until one succeeds or
// plan.GiveUp passes. The test fails when the first call fails. Calls run one at a
// time, on the test's goroutine.
func RecoverFrom(t testing.TB, p *Proxy, plan RecoveryPlan, call func(context.Context) error) Recovery {
	t.Helper()
	r := Recovery{Plan: plan, Recovered: -1}
	try := func() error {
		ctx, cancel := context.WithTimeout(context.Background(), plan.Timeout)
		defer cancel()
		err := call(ctx)
		if err != nil {
			if r.FirstErr == nil {
				r.FirstErr = err
			}
			r.LastErr = err
		}
		return err
	}
	warm := make(chan error, max(plan.Warm, 1))
	for range cap(warm) {
		go func() {
			ctx, cancel := context.WithTimeout(context.Background(), plan.Timeout)
			defer cancel()
			warm <- call(ctx)
		}()
	}
	for range cap(warm) {
		if err := <-warm; err != nil {
			t.Fatalf("before the outage: %v", err)
		}
	}

	type restored struct {
		at    time.Time
		dials int
	}
	backc := make(chan restored, 1)
	dials := p.Accepted()
	plan.Outage.Start(p)
	timer := time.AfterFunc(plan.For, func() {
		n := p.Accepted() - dials
		at := time.Now()
		p.Restore()
		backc <- restored{at, n}
	})
	defer func() {
		if timer.Stop() {
			p.Restore()
		}
	}()
	var back time.Time
	for {
		started := time.Now()
		err := try()
		now := time.Now()
		if back.IsZero() {
			select {
			case b := <-backc:
				back, r.Dials = b.at, b.dials
			default:
				r.Calls++
				if err != nil {
					r.Failed++
				}
				time.Sleep(plan.Every)
				continue
			}
		}
		if started.After(back) {
			r.Attempts++
		}
		if err == nil {
			r.Recovered = max(now.Sub(back), 0)
			return r
		}
		if now.Sub(back) > plan.GiveUp {
			return r
		}
		time.Sleep(plan.Every)
	}
}

// Measure runs RecoverFrom with MeasurePlan(o) and logs what it saw, after the
// test's name.
func Measure(t *testing.T, p *Proxy, o Outage, call func(context.Context) error) {
	t.Helper()
	t.Logf("%s: %v", t.Name(), RecoverFrom(t, p, MeasurePlan(o), call))
}

// MeasureRecovery skips the test unless FLURRY_MEASURE_RECOVERY=1 asks for the
// recovery measurements: each takes the store away for several seconds per outage,
// too long for every test run.
func MeasureRecovery(t testing.TB) {
	t.Helper()
	if os.Getenv("FLURRY_MEASURE_RECOVERY") != "1" {
		t.Skip("set FLURRY_MEASURE_RECOVERY=1 to measure how fast the stores recover from outages")
	}
}

// MeasurePlan is the plan of the recovery measurements: an outage of 6.5s, calls
// every 100ms bounded by 1s each (a lease session with a 4s TTL and a 1s window
// bounds its renewals so), given up 30s after the return, with 4 calls at once
// before the outage to fill the client's pool.
func MeasurePlan(o Outage) RecoveryPlan {
	return RecoveryPlan{Outage: o, For: 6500 * time.Millisecond, Every: 100 * time.Millisecond, Timeout: time.Second, GiveUp: 30 * time.Second, Warm: 4}
}

// CheckPlan is the plan of CheckRecovery: an outage of 2s, calls every 100ms
// bounded by 2s each, given up 10s after the return, with 2 calls at once before
// the outage.
func CheckPlan(o Outage) RecoveryPlan {
	return RecoveryPlan{Outage: o, For: 2 * time.Second, Every: 100 * time.Millisecond, Timeout: 2 * time.Second, GiveUp: 10 * time.Second, Warm: 2}
}

// CheckRecovery takes a store away in each way of Outages, each in a parallel
// subtest with the store setup makes behind its own Proxy, and fails the subtest
// unless the first call made after the store's return succeeds (CheckPlan): a
// client that waits out a reconnect backoff longer than the call's bound, or
// keeps using a connection that will never answer again, fails it.
func CheckRecovery(t *testing.T, setup func(t *testing.T) (*Proxy, func(context.Context) error)) {
	for _, o := range Outages {
		t.Run(o.String(), func(t *testing.T) {
			t.Parallel()
			p, call := setup(t)
			r := RecoverFrom(t, p, CheckPlan(o), call)
			if r.Recovered < 0 || r.Attempts > 1 {
				t.Errorf("%v\nwant the first call made after the store came back to succeed", r)
			} else {
				t.Log(r)
			}
		})
	}
}
