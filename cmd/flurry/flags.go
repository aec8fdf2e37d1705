package main

import (
	"strconv"
	"strings"

	"github.com/flurryid/flurry/layout"
)

// parseLayoutFlag reads a --layout value. A name or text form that is not a layout
// is a usage error (exit status 2), as the root help promises for a bad flag value.
func parseLayoutFlag(text string) (*layout.Layout, error) {
	return parseLayoutArg("--layout", text)
}

// parseLayoutArg reads a layout given on the command line (what names the
// flag or argument): not a layout is a usage error, its message without the
// layout package's own prefix after what.
func parseLayoutArg(what, text string) (*layout.Layout, error) {
	l, err := layout.Parse(text)
	if err != nil {
		return nil, &usageError{err: &argError{msg: what + ": " + strings.TrimPrefix(err.Error(), "layout: "), err: err}}
	}
	return l, nil
}

// argError is err under a message of its own.
type argError struct {
	msg string
	err error
}

func (e *argError) Error() string { return e.msg }
func (e *argError) Unwrap() error { return e.err }

// parseNodeFlag reads a node value as every command takes it (--node, redis
// set-node's VALUE): name=value pairs, or a plain number when the layout has exactly
// one node field, so "--layout sonyflake --node 42" works wherever a node is given.
// It returns the values and the text in name=value form (what the lease flags
// read), and refuses an unknown field or an out-of-range value as a usage error.
func parseNodeFlag(l *layout.Layout, flag, s string) (layout.NodeValues, string, error) {
	var nv layout.NodeValues
	text := strings.TrimSpace(s)
	if text != "" && !strings.Contains(text, "=") {
		fields := l.NodeFields()
		switch {
		case len(fields) == 0:
			return nv, "", usageErr("%s %q: layout %s has no node field, so it takes no node value", flag, clipArg(text), l)
		case len(fields) > 1:
			return nv, "", usageErr("%s %q: the layout has %d node fields; give them as name=value, e.g. %s",
				flag, clipArg(text), len(fields), l.FormatNodeValues(layout.NodeValues{}))
		}
		if _, err := strconv.ParseInt(text, 10, 64); err != nil {
			return nv, "", usageErr("%s: node value %q is not a whole number", flag, clipArg(text))
		}
		text = fields[0].Name + "=" + text
	}
	nv, err := l.ParseNodeValues(text) // checks that every value fits its field
	if err != nil {
		return nv, "", &usageError{err: &argError{msg: flag + ": " + strings.TrimPrefix(err.Error(), "layout: "), err: err}}
	}
	return nv, text, nil
}

// clipArg shortens an argument quoted in an error message.
func clipArg(s string) string {
	if len(s) > 40 {
		return s[:40] + "…"
	}
	return s
}
