package redisgen

import (
	"fmt"
	"math"
	"strings"
	"time"
)

// scriptParams are the layout's numbers that issueScript bakes into the script's
// text, so that a call sends only the count: Redis turns every ARGV element into a
// Lua string and every tonumber of one is a strtod, which together cost more than
// the rest of the script (valgrind --tool=callgrind on redis-server 7.0: 133k
// instructions per call with them as ARGV, see docs/benchmarks.md).
type scriptParams struct {
	epoch, unit, maxTick, seqMax int64 // epoch in Unix ms, unit in ms
	timeShift, seqShift          int
	layout                       string // the layout's text form
	nodes                        []scriptNode
}

// scriptNode is one node field: its hash field name, largest value and shift.
type scriptNode struct {
	name  string
	max   int64
	shift int
}

// issueScript returns the script that issues up to ARGV[1] IDs of one tick,
// atomically, inside Redis, for the layout p describes.
//
// KEYS[1] {ns}:node  hash: node field name -> value (decimal)
// KEYS[2] {ns}:last  hash: tick -> the last tick issued, seq -> the last sequence
//
//	value used in it, layout -> the layout's text form (written once)
//
// Replies (first element is the status):
//
//	{0, hi, lo, granted}      issued: the first ID is hi<<32|lo, the others follow
//	                          it in the sequence field (first + i<<seqShift)
//	{1, wait}                 the tick's sequence is used up: the next tick starts in wait µs
//	{2, gap, last, tick}      Redis TIME is gap µs behind the start of the last issued tick
//	{3, tick}                 the time field is exhausted at this tick
//	{4, field}                the node hash lacks this field
//	{5, field, raw}           the node field holds raw, which is not a value of the field
//	{6, layout}               the namespace was used with another layout (its text form)
//	{7, gap}                  Redis TIME is gap µs before the layout's epoch
//
// Lua numbers are IEEE doubles, exact only up to 2^53, so the ID is never held as
// one number (seed 001's script did that and lost its low bits): every field is
// placed into two 32-bit halves. v * 2^shift is exact (a power-of-two scaling of an
// exact integer below 2^53); dividing by 2^32 and flooring is exact; and the
// remainder x - h*2^32 is an integer below 2^32, which a correctly rounded
// subtraction gives exactly. The fields do not overlap, so the halves add up
// without carries. Integers are written back exactly: as numbers below 1e14, with
// %.0f above (never with tostring, which switches to exponent notation from 1e14 on). The constants are written into the
// text as integer literals (%d, and powers of two with %.0f, which Go prints
// exactly), which Lua reads exactly.
func issueScript(p scriptParams) string {
	var b strings.Builder
	b.WriteString(`
local TWO32 = 4294967296
local hi, lo = 0, 0
local function put(x)
  local h = math.floor(x / TWO32)
  hi = hi + h
  lo = lo + (x - h * TWO32)
end
-- int returns x for redis.call to write: below 1e14 the number itself, which
-- every Redis writes exactly (6.x with %.14g, 7.x shortest round trip) and more
-- cheaply than string.format; above, %.0f.
local function int(x)
  if x < 1e14 then return x end
  return string.format('%.0f', x)
end
local n = tonumber(ARGV[1])
`)
	if len(p.nodes) > 0 {
		b.WriteString("local vals = redis.pcall('HMGET', KEYS[1]")
		for _, f := range p.nodes {
			b.WriteString(", " + luaQuote(f.name))
		}
		b.WriteString(")\nif vals.err then return {5, '', vals.err} end\nlocal raw, v\n")
		for i, f := range p.nodes {
			q := luaQuote(f.name)
			fmt.Fprintf(&b, `raw = vals[%[1]d]
if not raw then return {4, %[2]s} end
if string.len(raw) > 16 or not string.match(raw, '^%%d+$') then return {5, %[2]s, raw} end
v = tonumber(raw)
if v > %[3]d then return {5, %[2]s, raw} end
put(v * %.0[4]f)
`, i+1, q, f.max, math.Ldexp(1, f.shift))
		}
	}
	fmt.Fprintf(&b, `local t = redis.call('TIME')
local nowUs = tonumber(t[1]) * 1000000 + tonumber(t[2])
local nowMs = math.floor(nowUs / 1000)
if nowMs < %[1]d then return {7, %[1]d * 1000 - nowUs} end
local tick = math.floor((nowMs - %[1]d) / %[2]d)
if tick > %[3]d then return {3, tick} end

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
put(tick * %.0[6]f)
put(first * %.0[7]f)
return {0, hi, lo, granted}
`, p.epoch, p.unit, p.maxTick, luaQuote(p.layout), p.seqMax, math.Ldexp(1, p.timeShift), math.Ldexp(1, p.seqShift))
	return b.String()
}

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
	statusIssued = iota
	statusFull
	statusBehind
	statusExhausted
	statusNodeMissing
	statusNodeInvalid
	statusLayout
	statusBeforeEpoch
)

// reply is issueScript's answer, decoded.
type reply struct {
	status  int64
	first   int64         // statusIssued: the first ID
	granted int64         // statusIssued: how many IDs follow from first
	wait    time.Duration // statusFull, statusBehind, statusBeforeEpoch
	last    int64         // statusBehind: the last issued tick
	tick    int64         // statusBehind, statusExhausted: Redis's tick
	field   string        // statusNodeMissing, statusNodeInvalid
	raw     string        // statusNodeInvalid: the stored value; statusLayout: the stored layout
}

// parseReply decodes what issueScript returned. It checks the shape of the reply
// and the ranges of the numbers, so that a reply from another script (or a
// corrupted one) is an error, never a wrong ID: want is the most IDs asked for.
func parseReply(v any, want int64) (reply, error) {
	a, ok := v.([]any)
	if !ok || len(a) == 0 {
		return reply{}, fmt.Errorf("unexpected script reply %v", v)
	}
	var r reply
	if r.status, ok = a[0].(int64); !ok {
		return reply{}, fmt.Errorf("unexpected script reply %v", v)
	}
	ints := func(n int) ([]int64, error) {
		if len(a) != n+1 {
			return nil, fmt.Errorf("unexpected script reply %v: status %d takes %d values", v, r.status, n)
		}
		out := make([]int64, n)
		for i := range out {
			x, ok := a[i+1].(int64)
			if !ok {
				return nil, fmt.Errorf("unexpected script reply %v: value %d is not an integer", v, i+1)
			}
			out[i] = x
		}
		return out, nil
	}
	strs := func(n int) ([]string, error) {
		if len(a) != n+1 {
			return nil, fmt.Errorf("unexpected script reply %v: status %d takes %d values", v, r.status, n)
		}
		out := make([]string, n)
		for i := range out {
			s, ok := a[i+1].(string)
			if !ok {
				return nil, fmt.Errorf("unexpected script reply %v: value %d is not a string", v, i+1)
			}
			out[i] = s
		}
		return out, nil
	}
	micros := func(us int64) (time.Duration, error) {
		if us < 0 || us > int64(1<<62)/int64(time.Microsecond) {
			return 0, fmt.Errorf("unexpected script reply %v: wait %dµs", v, us)
		}
		return time.Duration(us) * time.Microsecond, nil
	}
	switch r.status {
	case statusIssued:
		x, err := ints(3)
		if err != nil {
			return reply{}, err
		}
		if x[0] < 0 || x[0] >= 1<<31 || x[1] < 0 || x[1] >= 1<<32 || x[2] < 1 || x[2] > want {
			return reply{}, fmt.Errorf("unexpected script reply %v: halves or count out of range", v)
		}
		r.first, r.granted = x[0]<<32|x[1], x[2]
	case statusFull, statusBeforeEpoch:
		x, err := ints(1)
		if err != nil {
			return reply{}, err
		}
		if r.wait, err = micros(x[0]); err != nil {
			return reply{}, err
		}
	case statusBehind:
		x, err := ints(3)
		if err != nil {
			return reply{}, err
		}
		if r.wait, err = micros(x[0]); err != nil {
			return reply{}, err
		}
		r.last, r.tick = x[1], x[2]
	case statusExhausted:
		x, err := ints(1)
		if err != nil {
			return reply{}, err
		}
		r.tick = x[0]
	case statusNodeMissing:
		s, err := strs(1)
		if err != nil {
			return reply{}, err
		}
		r.field = s[0]
	case statusNodeInvalid:
		s, err := strs(2)
		if err != nil {
			return reply{}, err
		}
		r.field, r.raw = s[0], s[1]
	case statusLayout:
		s, err := strs(1)
		if err != nil {
			return reply{}, err
		}
		r.raw = s[0]
	default:
		return reply{}, fmt.Errorf("unexpected script reply %v: unknown status %d", v, r.status)
	}
	return r, nil
}
