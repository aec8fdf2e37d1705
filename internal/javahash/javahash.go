// Package javahash reproduces the order in which Java's HashMap, HashSet and
// ConcurrentHashMap iterate String keys, so that a page flurry serves in place of
// a Java server (Leaf's /cache, whose rows come out of a HashMap) lists its rows in
// the order the Java server would.
//
// The order follows from String.hashCode, the table size and the order of the
// insertions and removals, all of which are reproduced here for linked bins. A
// Java table turns a bin into a tree once it holds more than eight keys and the
// table has 64 slots or more; the order inside such a bin is not reproduced (it
// takes nine names whose hashes share their low bits).
package javahash

import "unicode/utf16"

// StringHash is Java's String.hashCode: s as UTF-16 code units, h = 31*h + c.
func StringHash(s string) int32 {
	var h int32
	for _, r := range s {
		if r >= 0x10000 {
			hi, lo := utf16.EncodeRune(r)
			h = 31*h + int32(hi)
			h = 31*h + int32(lo)
			continue
		}
		h = 31*h + int32(r)
	}
	return h
}

// spread is HashMap.hash and ConcurrentHashMap.spread without its sign mask: the
// high half folded into the low half. Only the low bits pick a slot, so the two
// agree on every table size flurry reproduces.
func spread(s string) uint32 {
	h := uint32(StringHash(s))
	return h ^ h>>16
}

// tableSizeFor is HashMap.tableSizeFor: the smallest power of two >= c (at least 1).
func tableSizeFor(c int) int {
	n := 1
	for n < c {
		n <<= 1
	}
	return n
}

// table is a chained hash table of keys, bins in slot order.
type table struct {
	bins [][]string
	size int
}

func (t *table) index(k string) int { return int(spread(k) & uint32(len(t.bins)-1)) }

func (t *table) has(k string) bool {
	if len(t.bins) == 0 {
		return false
	}
	for _, e := range t.bins[t.index(k)] {
		if e == k {
			return true
		}
	}
	return false
}

func (t *table) remove(k string) bool {
	if len(t.bins) == 0 {
		return false
	}
	i := t.index(k)
	for j, e := range t.bins[i] {
		if e == k {
			t.bins[i] = append(t.bins[i][:j:j], t.bins[i][j+1:]...)
			t.size--
			return true
		}
	}
	return false
}

// keys lists the keys in iteration order: slot by slot, each bin in its order.
func (t *table) keys() []string {
	out := make([]string, 0, t.size)
	for _, b := range t.bins {
		out = append(out, b...)
	}
	return out
}

// HashMap is a java.util.HashMap<String, ?> (or a HashSet<String>) reduced to its
// keys' order.
type HashMap struct {
	t         table
	threshold int // the first table's size until it is made, then 3/4 of the size
}

// NewHashMap is new HashMap<>(initialCapacity); 0 means the default, 16.
func NewHashMap(initialCapacity int) *HashMap {
	if initialCapacity <= 0 {
		return &HashMap{}
	}
	return &HashMap{threshold: tableSizeFor(initialCapacity)}
}

// NewHashSetOf is new HashSet<>(keys): a table sized for them, filled in order.
func NewHashSetOf(keys []string) *HashMap {
	m := NewHashMap(max(int(float32(len(keys))/0.75)+1, 16))
	for _, k := range keys {
		m.Put(k)
	}
	return m
}

// Put adds k, as HashMap.put does for a key not yet present; a present key keeps
// its place.
func (m *HashMap) Put(k string) {
	if len(m.t.bins) == 0 {
		m.resize()
	}
	i := m.t.index(k)
	for _, e := range m.t.bins[i] {
		if e == k {
			return
		}
	}
	m.t.bins[i] = append(m.t.bins[i], k)
	if len(m.t.bins[i]) > 8 && len(m.t.bins) < 64 {
		// treeifyBin on a small table resizes instead.
		m.resize()
	}
	m.t.size++
	if m.t.size > m.threshold {
		m.resize()
	}
}

// Remove deletes k if present.
func (m *HashMap) Remove(k string) { m.t.remove(k) }

// Has reports whether k is present.
func (m *HashMap) Has(k string) bool { return m.t.has(k) }

// Len is the number of keys.
func (m *HashMap) Len() int { return m.t.size }

// Keys lists the keys in the order Java iterates them.
func (m *HashMap) Keys() []string { return m.t.keys() }

// Clone is HashMap.clone, which FreeMarker's SimpleHash makes of a HashMap it
// wraps: a table sized for the keys (the smallest power of two above
// size/0.75+1), filled in m's order.
func (m *HashMap) Clone() *HashMap {
	c := &HashMap{}
	if n := m.t.size; n > 0 {
		c.threshold = tableSizeFor(int(float32(n)/0.75 + 1))
	}
	for _, k := range m.Keys() {
		c.Put(k)
	}
	return c
}

// resize is HashMap.resize: the first table, or twice the slots, each bin split
// into the keys that stay and those that move up by the old size, both in order.
func (m *HashMap) resize() {
	old := m.t.bins
	n := len(old) * 2
	if len(old) == 0 {
		n = m.threshold
		if n == 0 {
			n = 16
		}
	}
	m.t.bins = make([][]string, n)
	m.threshold = int(float64(n) * 0.75)
	for i, b := range old {
		for _, k := range b {
			j := i
			if spread(k)&uint32(len(old)) != 0 {
				j += len(old)
			}
			m.t.bins[j] = append(m.t.bins[j], k)
		}
	}
}

// ConcurrentHashMap is a java.util.concurrent.ConcurrentHashMap<String, ?> made
// with its default constructor, reduced to its keys' order, as one thread changes
// it.
type ConcurrentHashMap struct {
	t table
}

// NewConcurrentHashMap is new ConcurrentHashMap<>().
func NewConcurrentHashMap() *ConcurrentHashMap { return &ConcurrentHashMap{} }

// Put adds k, as ConcurrentHashMap.put does for a key not yet present; a present
// key keeps its place.
func (m *ConcurrentHashMap) Put(k string) {
	if len(m.t.bins) == 0 {
		m.t.bins = make([][]string, 16)
	}
	i := m.t.index(k)
	for _, e := range m.t.bins[i] {
		if e == k {
			return
		}
	}
	m.t.bins[i] = append(m.t.bins[i], k)
	before := len(m.t.bins[i]) - 1
	m.t.size++
	if before >= 8 && len(m.t.bins) < 64 {
		// treeifyBin on a small table: tryPresize(n << 1), doubling until the
		// size control (3/4 of the slots) reaches tableSizeFor(1.5 * 2n + 1).
		c := tableSizeFor(2*len(m.t.bins) + len(m.t.bins) + 1)
		for c > len(m.t.bins)/4*3 {
			m.transfer()
		}
	}
	// addCount: resize while the count reaches 3/4 of the slots.
	for m.t.size >= len(m.t.bins)/4*3 {
		m.transfer()
	}
}

// Remove deletes k if present.
func (m *ConcurrentHashMap) Remove(k string) { m.t.remove(k) }

// Has reports whether k is present.
func (m *ConcurrentHashMap) Has(k string) bool { return m.t.has(k) }

// Len is the number of keys.
func (m *ConcurrentHashMap) Len() int { return m.t.size }

// Keys lists the keys in the order Java iterates them.
func (m *ConcurrentHashMap) Keys() []string { return m.t.keys() }

// transfer is ConcurrentHashMap.transfer by one thread: each bin is split at its
// last run (the longest tail whose keys all go to the same half), which moves as
// it is; the keys before it are pushed onto the front of their half one by one,
// so they end up reversed, ahead of the run.
func (m *ConcurrentHashMap) transfer() {
	old := m.t.bins
	n := len(old)
	next := make([][]string, 2*n)
	for i, b := range old {
		if len(b) == 0 {
			continue
		}
		up := func(k string) bool { return spread(k)&uint32(n) != 0 }
		last := len(b) - 1
		for last > 0 && up(b[last-1]) == up(b[len(b)-1]) {
			last--
		}
		var lo, hi []string
		if up(b[last]) {
			hi = append(hi, b[last:]...)
		} else {
			lo = append(lo, b[last:]...)
		}
		for _, k := range b[:last] {
			if up(k) {
				hi = append([]string{k}, hi...)
			} else {
				lo = append([]string{k}, lo...)
			}
		}
		next[i], next[i+n] = lo, hi
	}
	m.t.bins = next
}
