// Package nodepool maps a leased value onto a layout's node fields: which fields a
// lease fills, how many values the pool holds, and the suffix that keeps the scopes of
// pools with different fixed fields apart. A lease session and an in-database
// install share it, so that a server and a database leasing in one scope agree on
// every node value's fields.
package nodepool

import "fmt"

// Values holds the node fields' values in layout order: the array type of
// layout.NodeValues, so that the two convert without a copy and a change of
// layout.MaxNodeFields breaks the callers' build instead of this package importing
// layout (the helpers sit below every other layer).
type Values = [8]int64

// Field is one node field of a layout: its name and width.
type Field struct {
	Name string
	Bits int
}

// Layout is what Plan reads of a layout; *layout.Layout's methods give it through
// the callers' small adapter (lease and indb).
type Layout struct {
	// Name is the layout's text form, for errors.
	Name string
	// Fields are its node fields in layout order.
	Fields []Field
	// Check reports whether node values fit the fields (layout.CheckNodeValues).
	Check func(Values) error
}

// MaxBits is the widest pool one lease scope holds: 2^22 (4,194,304) values.
const MaxBits = 22

// Pool is how a leased value fills the node fields of a layout.
type Pool struct {
	Leased []int  // indexes of the leased node fields, most significant first
	Bits   []uint // their widths
	Size   int64  // how many values the pool holds: 1 << the sum of Bits
	// Fixed is "/name=value" for each node field the lease does not fill, in the
	// layout's order; appended to a scope, it keeps apart the pools of
	// processes whose fixed fields differ.
	Fixed string
}

// Plan returns the pool that leases the node fields named in leased (all of the
// layout's node fields when empty), with the other node fields at their values in
// node. A leased field must be zero in node. The errors name the field or the
// widths; callers add what to do.
func Plan(l Layout, leased []string, node Values) (Pool, error) {
	fields := l.Fields
	if len(leased) == 0 {
		for _, f := range fields {
			leased = append(leased, f.Name)
		}
	}
	var p Pool
	var total uint
	for _, name := range leased {
		i := -1
		for j, f := range fields {
			if f.Name == name {
				i = j
			}
		}
		if i < 0 {
			return Pool{}, fmt.Errorf("layout %s has no node field %q to lease", l.Name, name)
		}
		if node[i] != 0 {
			return Pool{}, &GivenError{Field: name}
		}
		p.Leased = append(p.Leased, i)
		p.Bits = append(p.Bits, uint(fields[i].Bits))
		total += uint(fields[i].Bits)
	}
	if total > MaxBits {
		return Pool{}, &WideError{Bits: total}
	}
	if l.Check != nil {
		if err := l.Check(node); err != nil {
			return Pool{}, err
		}
	}
	p.Size = 1 << total
	for j, f := range fields {
		if !p.leases(j) {
			p.Fixed += fmt.Sprintf("/%s=%d", f.Name, node[j])
		}
	}
	return p, nil
}

func (p Pool) leases(field int) bool {
	for _, k := range p.Leased {
		if k == field {
			return true
		}
	}
	return false
}

// NodeOf returns base with the leased fields filled from v, the last leased
// field taking v's lowest bits.
func (p Pool) NodeOf(base Values, v int64) Values {
	shift := uint(0)
	for k := len(p.Leased) - 1; k >= 0; k-- {
		base[p.Leased[k]] = v >> shift & (1<<p.Bits[k] - 1)
		shift += p.Bits[k]
	}
	return base
}

// GivenError is Plan's error for a leased field that node gives a value too.
type GivenError struct{ Field string }

func (e *GivenError) Error() string {
	return fmt.Sprintf("node field %q is leased, so its value cannot be given too", e.Field)
}

// WideError is Plan's error for leased fields wider than MaxBits together.
type WideError struct{ Bits uint }

func (e *WideError) Error() string {
	return fmt.Sprintf("the leased node fields take %d bits; at most %d (4,194,304 values) can be leased from one pool", e.Bits, MaxBits)
}
