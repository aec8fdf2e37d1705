package redisgen

import (
	"fmt"
	"math"
	"strings"
)

// oldIssueScript is the script of this package before the counter format
// (redisgen/script.go at a194df7), kept to test that a namespace moves from its
// hash format to the counter format safely: a client still running it and a new
// client never both issue, each from a state of its own.
//
// Its reply is {0, hi, lo, granted} when it issues; ARGV[1] is the count.
func oldIssueScript(p scriptParams) string {
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
