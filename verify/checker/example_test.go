package checker_test

import (
	"fmt"
	"os"
	"time"

	"github.com/flurryid/flurry/layout"
	"github.com/flurryid/flurry/verify/checker"
	"github.com/flurryid/flurry/verify/plot"
)

// A harness creates one checker for the run, lets every client Add what it got,
// reports restarts, then checks against the nemesis's fault windows and writes the
// report and its chart.
func Example() {
	twitter, _ := layout.Lookup("twitter")
	c := checker.New([]checker.Namespace{
		{Name: "orders", Kind: checker.Snowflake, Layout: twitter, MaxAhead: time.Minute},
		{Name: "invoices", Kind: checker.Segment},
	})
	start := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	base := int64(1_900_000_000_000_000_000)
	for i := range 100 {
		t := start.Add(time.Duration(i) * 100 * time.Millisecond)
		c.Add(checker.Op{Client: "c1", Node: "n1", Namespace: "orders", Start: t, End: t.Add(time.Millisecond),
			IDs: []int64{base + int64(i)<<22, base + int64(i)<<22 + 1}})
		if i >= 40 && i < 50 {
			c.Add(checker.Op{Client: "c1", Node: "n2", Namespace: "invoices", Start: t, End: t.Add(time.Second), Err: "timeout"})
			continue
		}
		c.Add(checker.Op{Client: "c1", Node: "n2", Namespace: "invoices", Start: t, End: t.Add(time.Millisecond), IDs: []int64{int64(i) + 1}})
	}
	c.Restarted(checker.Restart{Node: "n2", At: start.Add(5 * time.Second)})
	windows := []checker.Window{{Name: "partition n2", Start: start.Add(4 * time.Second), End: start.Add(5 * time.Second)}}

	r := c.Check(windows)
	fmt.Println("OK:", r.OK())
	fmt.Println("IDs:", r.Totals.IDs, "duplicates:", r.Totals.Duplicates)
	fmt.Printf("invoices answered: %.0f%%, longest gap: %v\n", 100*r.Namespaces[1].Availability(), r.Namespaces[1].Gap.Duration())
	fmt.Printf("during %q: %d of %d answered\n", r.Windows[0].Name, r.Windows[0].Answered, r.Windows[0].Requests)

	if dir := os.Getenv("CHECKER_SAMPLE"); dir != "" { // to look at the report
		md, _ := os.Create(dir + "/report.md")
		defer md.Close()
		checker.WriteMarkdown(md, r)
		png, _ := os.Create(dir + "/throughput.png")
		defer png.Close()
		chart := plot.Chart{Title: "IDs/s", XLabel: "seconds since start", YLabel: "IDs/s",
			Series: c.Throughput(500 * time.Millisecond), Shade: c.Bands(windows)}
		chart.WritePNG(png, 1000, 450)
	}
	// Output:
	// OK: true
	// IDs: 290 duplicates: 0
	// invoices answered: 90%, longest gap: 1.1s
	// during "partition n2": 10 of 20 answered
}
