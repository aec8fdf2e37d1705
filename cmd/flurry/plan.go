package main

import (
	"encoding/json"
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"

	"github.com/flurryid/flurry/layout"
	"github.com/spf13/cobra"
)

func newPlanCmd() *cobra.Command {
	var (
		req       layout.Requirements
		nodes     uint64
		needs     nodeNeeds
		epochText string
		asJSON    bool
	)
	cmd := &cobra.Command{
		Use:   "plan",
		Short: "Propose a layout for years of life, a peak rate and a number of nodes",
		Long: `plan works out the narrowest layout that lasts --years, lets one node issue --rate
IDs per second, and has room for the node values asked for, then gives the spare bits
to the time field until the layout lasts twice --years (a margin for a system that
outlives its plan) and the rest to the sequence field (headroom over --rate, for
bursts and growth): time first would buy centuries and leave the peak rate with
little room. It prints the layout's text form (for --layout), one line of reasoning
per field and per use of the spare bits, and the layout's facts.

Node fields are given most significant first, each with the number of values it must
hold: --node datacenter=4 --node machine=100. --nodes 1024 is short for one field
named "node". With neither, plan uses --nodes 1024.

When the requirements need more than 63 bits (53 with --js-safe), plan says what each
one costs and how far one of them would have to shrink, and exits with status 1.`,
		Example: `  flurry plan --years 20 --rate 100000 --nodes 1024
  flurry plan --years 10 --rate 1e5 --node datacenter=4 --node machine=100 --node line=10
  flurry plan --years 30 --rate 1000 --unit 100ms --node worker=64 --js-safe
  flurry plan --years 50 --rate 4096000 --epoch 2026-01-01 --json`,
		Args: noArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			fl := cmd.Flags()
			for _, name := range []string{"years", "rate"} {
				if !fl.Changed(name) {
					return usageErr("--%s is required", name)
				}
			}
			switch {
			case fl.Changed("nodes") && len(needs) > 0:
				return usageErr("give either --nodes or --node, not both")
			case fl.Changed("nodes"):
				req.Nodes = []layout.NodeNeed{{Name: "node", Count: nodes}}
			default:
				req.Nodes = needs
			}
			if epochText != "" {
				t, err := parseEpoch(epochText)
				if err != nil {
					return usageErr("--epoch: %v", err)
				}
				req.Epoch = t
			}
			p, err := layout.Plan(req)
			if err != nil {
				return err
			}
			facts := p.Layout.Facts(time.Now())
			out := cmd.OutOrStdout()
			if asJSON {
				enc := json.NewEncoder(out)
				enc.SetIndent("", "  ")
				return enc.Encode(struct {
					Layout    string       `json:"layout"`
					Spare     int          `json:"spare_bits"`
					Reasoning []string     `json:"reasoning"`
					Facts     layout.Facts `json:"facts"`
				}{p.Layout.String(), p.Spare, p.Reasoning, facts})
			}
			fmt.Fprintf(out, "%s\n\nwhy:\n", p.Layout)
			for _, r := range p.Reasoning {
				fmt.Fprintf(out, "  %s\n", r)
			}
			fmt.Fprintf(out, "\nfacts:\n")
			return writeFacts(out, "  ", facts)
		},
	}
	f := cmd.Flags()
	f.Var(floatValue{&req.Years}, "years", "how many years from the epoch IDs must be issued (required)")
	f.Var(floatValue{&req.Rate}, "rate", "peak IDs per second one node issues, e.g. 100000 or 1e5 (required)")
	f.Var(countValue{&nodes}, "nodes", `number of nodes, as one node field named "node"`)
	f.Var(&needs, "node", "a node field and its number of values, most significant first; repeatable: --node datacenter=4 --node machine=100")
	f.DurationVar(&req.Unit, "unit", time.Millisecond, "length of one time tick: a whole number of milliseconds (1ms, 10ms, 1s)")
	f.StringVar(&epochText, "epoch", "", "instant the time field counts from: RFC 3339, a date or Unix ms (default: the start of today, UTC)")
	f.BoolVar(&req.JSSafe, "js-safe", false, "fit in 53 bits, so IDs are exact as JavaScript numbers")
	f.BoolVar(&asJSON, "json", false, "print the proposal as one JSON object")
	return cmd
}

// nodeNeeds is the repeatable --node name=count flag of plan.
type nodeNeeds []layout.NodeNeed

func (n *nodeNeeds) String() string {
	parts := make([]string, len(*n))
	for i, nn := range *n {
		parts[i] = fmt.Sprintf("%s=%d", nn.Name, nn.Count)
	}
	return strings.Join(parts, ",")
}

func (n *nodeNeeds) Type() string { return "name=count" }

// Set takes one name=count, or several separated by commas.
func (n *nodeNeeds) Set(s string) error {
	for _, pair := range strings.Split(s, ",") {
		name, count, ok := strings.Cut(strings.TrimSpace(pair), "=")
		if !ok || strings.TrimSpace(name) == "" {
			return fmt.Errorf("%q: write name=count, e.g. machine=100", pair)
		}
		c, err := parseCount(count)
		if err != nil {
			return fmt.Errorf("%s: %v", name, err)
		}
		*n = append(*n, layout.NodeNeed{Name: strings.TrimSpace(name), Count: c})
	}
	return nil
}

// floatValue is a float flag that also accepts 1_000_000.
type floatValue struct{ value *float64 }

func (f floatValue) String() string { return strconv.FormatFloat(*f.value, 'g', -1, 64) }
func (f floatValue) Type() string   { return "number" }
func (f floatValue) Set(s string) error {
	v, err := strconv.ParseFloat(strings.ReplaceAll(strings.TrimSpace(s), "_", ""), 64)
	if err != nil || math.IsNaN(v) || math.IsInf(v, 0) {
		return fmt.Errorf("%q is not a number such as 100000 or 1e5", s)
	}
	*f.value = v
	return nil
}

// parseEpoch reads an RFC 3339 instant, a date (midnight UTC) or Unix milliseconds.
func parseEpoch(s string) (time.Time, error) {
	s = strings.TrimSpace(s)
	if t, err := time.Parse(time.RFC3339Nano, s); err == nil {
		return t, nil
	}
	if t, err := time.Parse(time.DateOnly, s); err == nil {
		return t, nil
	}
	if ms, err := strconv.ParseInt(s, 10, 64); err == nil && ms >= 0 && ms <= 253402300799999 { // to the end of year 9999
		return time.UnixMilli(ms).UTC(), nil
	}
	return time.Time{}, fmt.Errorf("%q is neither RFC 3339 (2026-01-01T00:00:00Z), a date (2026-01-01) nor Unix milliseconds", s)
}
