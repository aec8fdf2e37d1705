package layout

import (
	"fmt"
	"math"
	"time"
)

const msPerYear = 365.25 * 24 * 3600 * 1000

// maxTime is the last instant reports use; lifetimes past it are clamped to it.
var maxTime = time.Date(9999, 12, 31, 23, 59, 59, 999e6, time.UTC)

// endOfTicks returns the first instant after tick `ticks-1`, clamped to year 9999.
func (l *Layout) endOfTicks(ticks float64) time.Time {
	endMs := float64(l.c.EpochMs) + ticks*float64(l.c.UnitMs)
	if endMs >= float64(maxTime.UnixMilli()) {
		return maxTime
	}
	return time.UnixMilli(int64(endMs)).UTC()
}

// Lifetime returns the instant the time field runs out: the first instant whose tick
// does not fit. Instants after year 9999 are reported as 9999-12-31T23:59:59.999Z.
func (l *Layout) Lifetime() time.Time {
	return l.endOfTicks(math.Ldexp(1, int(l.c.TimeBits)))
}

// Exhausted reports whether the time field has run out at instant t.
func (l *Layout) Exhausted(t time.Time) bool { return !t.Before(l.Lifetime()) }

// Rate returns the most IDs one node can issue per second: the sequence values of one
// tick per tick length.
func (l *Layout) Rate() float64 {
	return math.Ldexp(1, int(l.c.SeqBits)) * float64(time.Second) / float64(l.unit)
}

// Nodes returns the number of distinct node values: 2 to the number of node bits.
func (l *Layout) Nodes() uint64 { return 1 << l.c.NodeBits }

// JSSafeUntil returns until when the layout's IDs stay below 2^53, the largest integer
// a JavaScript number holds exactly. It returns the lifetime when every ID of the
// layout is below 2^53, and the epoch when none but those of the first tick are.
func (l *Layout) JSSafeUntil() time.Time {
	if l.c.Bits <= 53 {
		return l.Lifetime()
	}
	low := l.c.Bits - l.c.TimeBits
	if low >= 53 {
		return l.endOfTicks(1)
	}
	return l.endOfTicks(math.Ldexp(1, int(53-low)))
}

// Facts summarises a layout for people and dashboards.
type Facts struct {
	Name      string    `json:"name,omitempty"`
	Layout    string    `json:"layout"`
	Bits      int       `json:"bits"`
	Unit      string    `json:"unit"`
	Epoch     time.Time `json:"epoch"`
	Lifetime  time.Time `json:"lifetime"`
	Exhausted bool      `json:"exhausted"`
	// YearsLeft is the time left until Lifetime, in years of 365.25 days, at the
	// instant Facts was asked; negative once exhausted.
	YearsLeft   float64   `json:"years_left"`
	RatePerNode float64   `json:"ids_per_second_per_node"`
	Nodes       uint64    `json:"nodes"`
	JSSafeUntil time.Time `json:"js_safe_until"`
	// JSSafe tells whether IDs stay below 2^53 for the layout's whole lifetime.
	JSSafe bool   `json:"js_safe"`
	About  string `json:"about,omitempty"`
}

// Facts returns the layout's facts as seen at instant now.
func (l *Layout) Facts(now time.Time) Facts {
	life := l.Lifetime()
	return Facts{
		Name:        l.name,
		Layout:      l.String(),
		Bits:        l.Bits(),
		Unit:        formatUnit(l.unit),
		Epoch:       l.epoch,
		Lifetime:    life,
		Exhausted:   l.Exhausted(now),
		YearsLeft:   float64(life.UnixMilli()-now.UnixMilli()) / msPerYear,
		RatePerNode: l.Rate(),
		Nodes:       l.Nodes(),
		JSSafeUntil: l.JSSafeUntil(),
		JSSafe:      !l.JSSafeUntil().Before(life),
		About:       l.About(),
	}
}

// FormatLeft writes the time left until a layout runs out for people, as the
// warnings near its end give it: whole days from two days on ("233 days"), else
// hours and minutes ("47h05m"), and "none" once it is over.
func FormatLeft(d time.Duration) string {
	switch {
	case d <= 0:
		return "none"
	case d >= 48*time.Hour:
		return fmt.Sprintf("%d days", int64(d/(24*time.Hour)))
	case d >= time.Hour:
		return fmt.Sprintf("%dh%02dm", int64(d/time.Hour), int64(d%time.Hour/time.Minute))
	}
	return d.Round(time.Second).String()
}
