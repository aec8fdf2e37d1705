package config

import (
	"time"

	"gopkg.in/yaml.v3"
)

// Duration is a Go duration written in the configuration, such as 500ms, 10s or 1m.
// It is parsed once, when the configuration is read; Check reports a malformed or
// out-of-range one with its file, line and key, and the server then reads the value
// with Or. The zero Duration is a key that was left out (or empty): each key
// documents what that means.
type Duration struct {
	text string        // as written; "" when not given
	d    time.Duration // the value, when ok
	ok   bool          // text is a duration
}

// DurationOf returns d as a Duration, for configurations built in code.
func DurationOf(d time.Duration) Duration { return Duration{text: d.String(), d: d, ok: true} }

func parseDuration(s string) Duration {
	d, err := time.ParseDuration(s)
	return Duration{text: s, d: d, ok: err == nil}
}

// UnmarshalYAML reads the text of a scalar. A text that is not a duration is not an
// error here: Check reports it, with the key's line, among the other problems.
func (d *Duration) UnmarshalYAML(n *yaml.Node) error {
	var s string
	if err := n.Decode(&s); err != nil {
		return err // a list or a mapping: the same problem as for any text key
	}
	*d = parseDuration(s)
	return nil
}

// MarshalYAML writes the duration as it was written.
func (d Duration) MarshalYAML() (any, error) { return d.text, nil }

// IsSet reports whether the key was given.
func (d Duration) IsSet() bool { return d.text != "" }

// Or returns the duration, or def when the key was not given (or, in a
// configuration that was not checked, is not a duration).
func (d Duration) Or(def time.Duration) time.Duration {
	if !d.ok {
		return def
	}
	return d.d
}

// String returns the duration as it was written.
func (d Duration) String() string { return d.text }

// duration checks a duration key and reports whether it is given and well-formed.
func (k *checker) duration(p []string, v Duration, negOK bool) bool {
	if !v.IsSet() {
		return false
	}
	switch {
	case !v.ok:
		k.add(p, "%q is not a duration such as 500ms, 10s or 1m", v.text)
	case v.d < 0 && !negOK:
		k.add(p, "%q is negative", v.text)
	default:
		return true
	}
	return false
}

// positiveDuration checks a duration key that must be above zero when given.
func (k *checker) positiveDuration(p []string, v Duration) {
	if k.duration(p, v, false) && v.d == 0 {
		k.add(p, "%q is zero: give a positive duration such as 10s", v.text)
	}
}
