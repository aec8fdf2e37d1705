package redisgen

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"math"
	"strings"
	"time"

	"github.com/flurryid/flurry/internal/bitcodec"
	"github.com/flurryid/flurry/layout"
)

// scriptParams are the layout's numbers that the scripts bake into their text, so
// that a call sends no layout numbers: Redis turns every ARGV element into a Lua
// string and every tonumber of one is a strtod (see docs/benchmarks.md).
type scriptParams struct {
	epoch, unit, maxTick, seqMax int64 // epoch in Unix ms, unit in ms
	timeBits, seqBits            int
	timeShift, seqShift          int
	layout                       string // the layout's text form
	nodes                        []scriptNode
	codec                        *bitcodec.Codec // composes the node mask
}

// scriptNode is one node field: its hash field name, largest value and shift.
type scriptNode struct {
	name  string
	max   int64
	shift int
}

// paramsOf reads the layout numbers the scripts and the ID composition need. It is
// the one place this package asks a layout for them.
func paramsOf(l *layout.Layout) (scriptParams, error) {
	c := bitcodec.New(l.Fields(), l.Unit(), l.Epoch(), layout.ErrInvalid)
	p := scriptParams{epoch: c.EpochMs, unit: c.UnitMs, maxTick: c.MaxTick(),
		seqMax: c.MaxSequence(), timeBits: int(c.TimeBits), seqBits: int(c.SeqBits),
		timeShift: int(c.TimeShift), seqShift: int(c.SeqShift), layout: l.String(), codec: c}
	for _, n := range c.Nodes {
		if n.Bits > maxNodeBits {
			return p, fmt.Errorf("redisgen: node field %q has %d bits; the script carries at most %d (Lua numbers are doubles)", n.Name, n.Bits, maxNodeBits)
		}
		p.nodes = append(p.nodes, scriptNode{name: n.Name, max: int64(1)<<n.Bits - 1, shift: int(n.Shift)})
	}
	return p, nil
}

// counter reports whether the layout's namespaces keep their state as one counter
// (the counter format): a tick's slots tick*2^seqBits ... + 2^seqBits-1 number every
// (tick, sequence) pair, and Lua's doubles hold them exactly while time and
// sequence bits together are at most 53. Wider layouts keep the hash format.
func (p scriptParams) counter() bool { return p.timeBits+p.seqBits <= 53 }

// slots is the number of sequence values in one tick.
func (p scriptParams) slots() int64 { return p.seqMax + 1 }

// counterField is the {ns}:last hash field that holds the counter of a layout and
// one set of node values (raw, as Redis holds them): named after both, so that a
// generator of another layout finds no counter of its own and takes the slow path,
// where the layout is checked, and so that Next's plain HINCRBY (see
// Generator.Next) can only ever move the counter of the node values it composes
// its IDs with. On a Redis that does not hold those values the field is missing
// and HINCRBY answers a slot near the epoch, which the client refuses.
func (p scriptParams) counterField(raw []string) string {
	sum := sha256.Sum256([]byte(p.layout))
	return "slot@" + hex.EncodeToString(sum[:8]) + "/" + strings.Join(raw, ",")
}

// counterFieldV1 is the field of the first counter format: one counter for every
// node value. The slow path moves it into the node values' own field.
func (p scriptParams) counterFieldV1() string {
	sum := sha256.Sum256([]byte(p.layout))
	return "next@" + hex.EncodeToString(sum[:8])
}

// markerSuffix follows the layout's text form in the layout field of a namespace
// in the counter format. A generator of an older format (the hash format, the
// first counter format, or a layout too wide for it) compares the field with its
// own marker or layout text, finds them different and refuses with
// ErrLayoutMismatch, naming the field: it can never issue from the state the
// counter replaced.
const markerSuffix = " (counter format 2: upgrade clients older than it)"

// markerSuffixV1 is markerSuffix of the first counter format.
const markerSuffixV1 = " (counter format: upgrade clients older than it)"

func (p scriptParams) marker() string   { return p.layout + markerSuffix }
func (p scriptParams) markerV1() string { return p.layout + markerSuffixV1 }

// issueScript returns the script that issues IDs of one tick atomically inside
// Redis for the layout p describes, checking that the node hash holds the values
// raw (as Redis returns them; the caller read and checked them and composes the
// IDs from them). one makes the script for Next: it issues one ID and takes no
// ARGV; otherwise ARGV[1] is the count, at most p.slots().
//
// KEYS[1] {ns}:node  hash: node field name -> value (decimal)
// KEYS[2] {ns}:last  hash, in one of two formats, by the layout:
//
//	counter format (time and sequence bits <= 53): slot@<layout hash>/<node values>
//	  -> the next free slot of those node values, tick*2^seqBits + seq + 1 of the
//	  last ID issued with them (0: none); layout -> the layout's text form
//	  followed by markerSuffix; floor -> the first counter format's counter when
//	  the namespace moved from it (no counter starts below it)
//	hash format (wider layouts, and every layout before the counter format):
//	  tick -> the last tick issued, seq -> the last sequence value used in it,
//	  layout -> the layout's text form
//
// The counter format takes one HINCRBY per call: the script adds the count to the
// counter and, when the slots it got lie in the current tick (all but the first call
// of a tick), is done. Otherwise (the slow path) it checks the layout field and
// corrects the counter with a second HINCRBY: the first call of a tick moves it to
// the tick's start; a tick used up or a clock behind the last slot puts it back.
// The layout field decides what the slow path does with a namespace: one of this
// format goes on; a new one, one of the hash format or of the first counter
// format moves to this format atomically (the old state becomes the counter, the
// old fields are deleted and the layout field gets the marker, so that older
// clients are refused from then on); one of another layout is refused and the
// counter removed again. Seen from outside the script the counter never goes back:
// every correction is made in the same run as the HINCRBY it corrects.
//
// Replies:
//
//	slot                      (one, counter format) issued: the ID of this slot
//	-1                        the node hash does not hold raw: read it again
//	{0, tick, seq, granted}   issued: the IDs of (tick, seq) ... (tick, seq+granted-1)
//	{1, wait}                 the tick's sequence is used up: the next tick starts in wait µs
//	{2, gap, last, tick}      Redis TIME is gap µs behind the start of the last issued tick
//	{3, tick}                 the time field is exhausted at this tick
//	{6, layout}               the namespace was used with another layout (its layout field)
//	{7, gap}                  Redis TIME is gap µs before the layout's epoch
//
// Lua numbers are IEEE doubles, exact up to 2^53; the script never holds an ID,
// only ticks, sequences and slots, which the layouts of each format keep below
// 2^53. HINCRBY returns integers, so the hot path converts no string to a number
// but TIME's two. Numbers passed to redis.call are written exactly below 1e14
// (Redis 6 with %.17g, 7 shortest round trip), with %.0f above.
func issueScript(p scriptParams, raw []string, one bool) string {
	var b strings.Builder
	b.WriteString("local n = ")
	if one {
		b.WriteString("1\n")
	} else {
		b.WriteString("tonumber(ARGV[1])\n")
	}
	// What the script does when the node hash no longer holds raw: in the
	// counter format it poisons raw's counter first (see poisonScript), so that
	// plain HINCRBYs still reaching this Redis with those values get slots below
	// zero, which every client refuses.
	gone := "return -1"
	if p.counter() && len(p.nodes) > 0 {
		gone = poisonScript(p.counterField(raw), "KEYS[2]") + " return -1"
	}
	// The node check: the values the caller composes the IDs from are still the
	// node hash's. Strings from Redis are interned Lua strings, so comparing with
	// a literal is cheap; no pattern match, no tonumber.
	switch len(p.nodes) {
	case 0:
	case 1:
		fmt.Fprintf(&b, "if redis.call('HGET', KEYS[1], %s) ~= %s then %s end\n", luaQuote(p.nodes[0].name), luaQuote(raw[0]), gone)
	default:
		b.WriteString("local v = redis.call('HMGET', KEYS[1]")
		for _, f := range p.nodes {
			b.WriteString(", " + luaQuote(f.name))
		}
		b.WriteString(")\nif ")
		for i := range p.nodes {
			if i > 0 {
				b.WriteString(" or ")
			}
			fmt.Fprintf(&b, "v[%d] ~= %s", i+1, luaQuote(raw[i]))
		}
		b.WriteString(" then " + gone + " end\n")
	}
	// TIME is two decimal strings; + 0 converts them. ms is whole milliseconds.
	fmt.Fprintf(&b, `local t = redis.call('TIME')
local s, us = t[1] + 0, t[2] + 0
local ms = s * 1000 + (us - us %% 1000) / 1000
if ms < %[1]d then return {7, %[1]d * 1000 - (s * 1000000 + us)} end
`, p.epoch)
	if p.unit == 1 {
		fmt.Fprintf(&b, "local tick = ms - %d\n", p.epoch)
	} else {
		fmt.Fprintf(&b, "local d = ms - %d\nlocal tick = (d - d %% %[2]d) / %[2]d\n", p.epoch, p.unit)
	}
	fmt.Fprintf(&b, "if tick > %d then return {3, tick} end\n", p.maxTick)
	if p.counter() {
		counterScript(&b, p, raw, one)
	} else {
		hashScript(&b, p)
	}
	return b.String()
}

// counterScript writes the counter format's part of issueScript.
func counterScript(b *strings.Builder, p scriptParams, raw []string, one bool) {
	// issued(slot expression, tick offset expression, count expression)
	ret := func(slot, seq, g string) string {
		if one {
			return "return " + slot
		}
		return fmt.Sprintf("return {0, tick, %s, %s}", seq, g)
	}
	S := p.slots()
	// The count goes to HINCRBY as the string it is (ARGV[1], or "1" for Next):
	// passing the number n would have Redis format it, about 2k instructions.
	incr := "ARGV[1]"
	if one {
		incr = `"1"`
	}
	field := luaQuote(p.counterField(raw))
	fmt.Fprintf(b, `local S = %[1]d
local t0 = tick * S
local e = redis.call('HINCRBY', KEYS[2], %[2]s, %[4]s)
local first = e - n
if e > n and first >= t0 and e <= t0 + S then %[3]s end
`, S, field, ret("first", "first - t0", "n"), incr)
	b.WriteString(luaInt)
	// A poisoned counter (poisonScript): this Redis holds the values again. It
	// restarts from nothing here, and floor (which kept its old value) puts it
	// back above its old IDs; no arithmetic is done on the poisoned value, which
	// a double does not hold exactly.
	fmt.Fprintf(b, `local nowUs = s * 1000000 + us
if e < -1e15 then
  redis.call('HSET', KEYS[2], %[2]s, int(n))
  e, first = n, 0
end
local prev = first
local st = redis.call('HMGET', KEYS[2], 'layout', 'floor')
if st[1] ~= %[4]s then
  if st[1] and st[1] ~= %[5]s and st[1] ~= %[10]s then
    redis.call('HDEL', KEYS[2], %[2]s)
    return {6, st[1]}
  end
  local old = redis.call('HMGET', KEYS[2], %[11]s, 'tick', 'seq')
  if old[1] then prev = math.max(prev, tonumber(old[1])) end
  if old[2] and old[3] then prev = math.max(prev, tonumber(old[2]) * S + tonumber(old[3]) + 1) end
  redis.call('HDEL', KEYS[2], %[11]s, 'tick', 'seq')
  redis.call('HSET', KEYS[2], 'layout', %[4]s, 'floor', int(prev))
elseif st[2] then
  prev = math.max(prev, tonumber(st[2]))
end
local ts = t0 + S
if prev < t0 then
  redis.call('HINCRBY', KEYS[2], %[2]s, int(t0 + n - e))
  %[6]s
end
if prev < ts then
  local g = math.min(n, ts - prev)
  if prev + g ~= e then redis.call('HINCRBY', KEYS[2], %[2]s, int(prev + g - e)) end
  %[7]s
end
redis.call('HINCRBY', KEYS[2], %[2]s, int(prev - e))
if prev == ts then return {1, ((tick + 1) * %[8]d + %[9]d) * 1000 - nowUs} end
local last = (prev - 1 - (prev - 1) %% S) / S
return {2, (last * %[8]d + %[9]d) * 1000 - nowUs, last, tick}
`, S, field, ret("first", "first - t0", "n"), luaQuote(p.marker()), luaQuote(p.layout),
		ret("t0", "0", "n"), ret("prev", "prev - t0", "g"), p.unit, p.epoch,
		luaQuote(p.markerV1()), luaQuote(p.counterFieldV1()))
}

// hashScript writes the hash format's part of issueScript: the state is the last
// tick and sequence, in fields of their own, as before the counter format.
func hashScript(b *strings.Builder, p scriptParams) {
	b.WriteString(luaInt)
	fmt.Fprintf(b, `local nowUs = s * 1000000 + us
local st = redis.call('HMGET', KEYS[2], 'tick', 'seq', 'layout')
if st[3] and st[3] ~= %[4]s then return {6, st[3]} end
local last, seq = tonumber(st[1]), tonumber(st[2])
local first = 0
if last ~= nil and seq ~= nil then
  if tick < last then
    return {2, (last * %[2]d + %[1]d) * 1000 - nowUs, last, tick}
  end
  if tick == last then
    first = seq + 1
    if first > %[5]d then
      return {1, ((tick + 1) * %[2]d + %[1]d) * 1000 - nowUs}
    end
  end
end
local granted = math.min(n, %[5]d - first + 1)
if st[3] then
  redis.call('HSET', KEYS[2], 'tick', int(tick), 'seq', int(first + granted - 1))
else
  redis.call('HSET', KEYS[2], 'tick', int(tick), 'seq', int(first + granted - 1), 'layout', %[4]s)
end
return {0, tick, first, granted}
`, p.epoch, p.unit, p.maxTick, luaQuote(p.layout), p.seqMax)
}

// poisoned is what a poisoned counter is set to: far below zero, so that the
// slots plain HINCRBYs take from it stay negative for 2^60 increments, and a
// script that finds it (the Redis holds the values again) moves it up to the
// tick's start, or to floor, like any counter behind the clock.
const poisoned = "-1152921504606846976" // -2^60

// poisonScript returns Lua statements that poison counter field f of the last
// key lastKey (a Lua expression): a node value's counter on a Redis that no longer
// holds that value. A plain HINCRBY (Generator.Next) sent with the old values,
// over a connection still open to this Redis (a moved VIP or DNS name, a pool
// with connections to two servers), would otherwise take the next slot of a
// counter that stands where the old tenure ended; enough such calls would move it
// into ticks a new holder of the value issues in. The counter's value is kept in
// floor first, so that no counter of the namespace on this Redis starts below it
// again (the value coming back to this Redis continues above its old IDs).
func poisonScript(f, lastKey string) string {
	return fmt.Sprintf(`do
  local c = tonumber(redis.call('HGET', %[2]s, %[1]s))
  if c and c > -1e15 then
    local fl = tonumber(redis.call('HGET', %[2]s, 'floor'))
    if not fl or c > fl then redis.call('HSET', %[2]s, 'floor', string.format('%%.0f', c)) end
    redis.call('HSET', %[2]s, %[1]s, '%[3]s')
  end
end`, luaQuote(f), lastKey, poisoned)
}

// setNodeScript returns the script SetNode runs for a layout of the counter
// format: it writes the node values (ARGV, in the order of p.nodes) and, when the
// hash held other values before, poisons their counter (poisonScript).
func setNodeScript(p scriptParams) string {
	var b strings.Builder
	b.WriteString("local old = redis.call('HMGET', KEYS[1]")
	for _, f := range p.nodes {
		b.WriteString(", " + luaQuote(f.name))
	}
	b.WriteString(")\nredis.call('HSET', KEYS[1]")
	for i, f := range p.nodes {
		fmt.Fprintf(&b, ", %s, ARGV[%d]", luaQuote(f.name), i+1)
	}
	b.WriteString(")\nlocal same, raw = true, {}\nfor i = 1, #old do\n  if not old[i] then return 0 end\n  if old[i] ~= ARGV[i] then same = false end\n  raw[i] = old[i]\nend\nif same then return 0 end\n")
	fmt.Fprintf(&b, "local f = %s .. table.concat(raw, ',')\n", luaQuote(p.counterField(nil)))
	b.WriteString(poisonScript("__F__", "KEYS[2]"))
	b.WriteString("\nreturn 1\n")
	return strings.ReplaceAll(b.String(), luaQuote("__F__"), "f")
}

// restoreScript returns the script Options.RestoreNode runs: when the node key
// does not exist it writes the node values (ARGV, in the order of p.nodes) and
// raises the namespace's floor to ARGV[#nodes+1] (counter format: the first slot
// allowed, kept in floor, below which the slow path starts no counter; hash
// format: the tick before the first one allowed, written as the last tick with
// its sequence used up),
// and answers 1; otherwise it changes nothing and answers 0. A last key of an
// older format or another layout is left alone: the issue script refuses or
// moves it, from its own state.
func restoreScript(p scriptParams) string {
	var b strings.Builder
	b.WriteString("if redis.call('EXISTS', KEYS[1]) == 1 then return 0 end\nredis.call('HSET', KEYS[1]")
	for i, f := range p.nodes {
		fmt.Fprintf(&b, ", %s, ARGV[%d]", luaQuote(f.name), i+1)
	}
	fmt.Fprintf(&b, ")\nlocal fl = ARGV[%d]\n", len(p.nodes)+1)
	if p.counter() {
		fmt.Fprintf(&b, `local st = redis.call('HMGET', KEYS[2], 'layout', 'floor')
if not st[1] then
  redis.call('HSET', KEYS[2], 'layout', %[1]s, 'floor', fl)
elseif st[1] == %[1]s and (not st[2] or tonumber(st[2]) < tonumber(fl)) then
  redis.call('HSET', KEYS[2], 'floor', fl)
end
return 1
`, luaQuote(p.marker()))
	} else {
		fmt.Fprintf(&b, `local st = redis.call('HMGET', KEYS[2], 'tick', 'layout')
if (not st[2] or st[2] == %[1]s) and (not st[1] or tonumber(st[1]) < tonumber(fl)) then
  redis.call('HSET', KEYS[2], 'tick', fl, 'seq', %[2]d, 'layout', %[1]s)
end
return 1
`, luaQuote(p.layout), p.seqMax)
	}
	return b.String()
}

// luaInt defines int(x), which returns x for redis.call to write: the number below
// 1e14, which every Redis writes exactly, and %.0f above (tostring switches to
// exponent notation from 1e14 on). Only the slow paths need it, after the hot path
// has returned, so the hot path does not pay for the closure.
const luaInt = `local function int(x)
  if x < 1e14 and x > -1e14 then return x end
  return string.format('%.0f', x)
end
`

// luaQuote returns s as a Lua string literal: printable ASCII other than the quote
// and the backslash as is, every other byte as a decimal escape.
func luaQuote(s string) string {
	var b strings.Builder
	b.WriteByte('"')
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c >= ' ' && c < 0x7f && c != '"' && c != '\\' {
			b.WriteByte(c)
		} else {
			fmt.Fprintf(&b, "\\%03d", c)
		}
	}
	b.WriteByte('"')
	return b.String()
}

// Reply statuses of issueScript.
const (
	statusIssued      = 0
	statusFull        = 1
	statusBehind      = 2
	statusExhausted   = 3
	statusLayout      = 6
	statusBeforeEpoch = 7
	statusNodeChanged = -1 // the integer reply -1
)

// reply is issueScript's answer, decoded.
type reply struct {
	status  int64
	tick    int64         // statusIssued; statusBehind, statusExhausted: Redis's tick
	seq     int64         // statusIssued: the first ID's sequence value
	granted int64         // statusIssued: how many IDs, from seq on
	wait    time.Duration // statusFull, statusBehind, statusBeforeEpoch
	last    int64         // statusBehind: the last issued tick
	raw     string        // statusLayout: the namespace's layout field
}

// parseReply decodes what issueScript returned. It checks the shape of the reply
// and the ranges of the numbers, so that a reply from another script (or a
// corrupted one) is an error, never a wrong ID: want is the most IDs asked for.
func parseReply(v any, p *scriptParams, want int64) (reply, error) {
	if x, ok := v.(int64); ok {
		if x == statusNodeChanged {
			return reply{status: statusNodeChanged}, nil
		}
		if x < 0 || x > math.MaxInt64/2 || !p.counter() || want != 1 || x/p.slots() > p.maxTick {
			return reply{}, fmt.Errorf("unexpected script reply %v", v)
		}
		return reply{status: statusIssued, tick: x / p.slots(), seq: x % p.slots(), granted: 1}, nil
	}
	a, ok := v.([]any)
	if !ok || len(a) == 0 {
		return reply{}, fmt.Errorf("unexpected script reply %v", v)
	}
	var r reply
	if r.status, ok = a[0].(int64); !ok {
		return reply{}, fmt.Errorf("unexpected script reply %v", v)
	}
	var x [3]int64
	ints := func(n int) error {
		if len(a) != n+1 {
			return fmt.Errorf("unexpected script reply %v: status %d takes %d values", v, r.status, n)
		}
		for i := range n {
			if x[i], ok = a[i+1].(int64); !ok {
				return fmt.Errorf("unexpected script reply %v: value %d is not an integer", v, i+1)
			}
		}
		return nil
	}
	micros := func(us int64) (time.Duration, error) {
		if us < 0 || us > int64(1<<62)/int64(time.Microsecond) {
			return 0, fmt.Errorf("unexpected script reply %v: wait %dµs", v, us)
		}
		return time.Duration(us) * time.Microsecond, nil
	}
	var err error
	switch r.status {
	case statusIssued:
		if err := ints(3); err != nil {
			return reply{}, err
		}
		r.tick, r.seq, r.granted = x[0], x[1], x[2]
		if r.tick < 0 || r.tick > p.maxTick || r.seq < 0 || r.granted < 1 || r.granted > want || r.seq > p.seqMax-r.granted+1 {
			return reply{}, fmt.Errorf("unexpected script reply %v: tick, sequence or count out of range", v)
		}
	case statusFull, statusBeforeEpoch:
		if err := ints(1); err != nil {
			return reply{}, err
		}
		if r.wait, err = micros(x[0]); err != nil {
			return reply{}, err
		}
	case statusBehind:
		if err := ints(3); err != nil {
			return reply{}, err
		}
		if r.wait, err = micros(x[0]); err != nil {
			return reply{}, err
		}
		r.last, r.tick = x[1], x[2]
	case statusExhausted:
		if err := ints(1); err != nil {
			return reply{}, err
		}
		r.tick = x[0]
	case statusLayout:
		if len(a) != 2 {
			return reply{}, fmt.Errorf("unexpected script reply %v: status %d takes 1 value", v, r.status)
		}
		if r.raw, ok = a[1].(string); !ok {
			return reply{}, fmt.Errorf("unexpected script reply %v: value 1 is not a string", v)
		}
	default:
		return reply{}, fmt.Errorf("unexpected script reply %v: unknown status %d", v, r.status)
	}
	return r, nil
}
