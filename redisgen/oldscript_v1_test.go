package redisgen

import (
	"fmt"
	"strings"
)

// v1IssueScript is issueScript of the first counter format (redisgen/script.go
// at 33d055a): one counter, next@<layout hash>, for every node value, and the
// marker markerSuffixV1. It is kept to test that such a namespace moves to the
// per-node-value counters safely while a client still running it issues: the
// two never issue from separate states.
func v1IssueScript(p scriptParams, raw []string, one bool) string {
	var b strings.Builder
	b.WriteString("local n = ")
	if one {
		b.WriteString("1\n")
	} else {
		b.WriteString("tonumber(ARGV[1])\n")
	}
	// The node check: the values the caller composes the IDs from are still the
	// node hash's. Strings from Redis are interned Lua strings, so comparing with
	// a literal is cheap; no pattern match, no tonumber.
	switch len(p.nodes) {
	case 0:
	case 1:
		fmt.Fprintf(&b, "if redis.call('HGET', KEYS[1], %s) ~= %s then return -1 end\n", luaQuote(p.nodes[0].name), luaQuote(raw[0]))
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
		b.WriteString(" then return -1 end\n")
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
		v1CounterScript(&b, p, one)
	} else {
		hashScript(&b, p)
	}
	return b.String()
}

// counterScript writes the counter format's part of issueScript.
func v1CounterScript(b *strings.Builder, p scriptParams, one bool) {
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
	fmt.Fprintf(b, `local S = %[1]d
local t0 = tick * S
local e = redis.call('HINCRBY', KEYS[2], %[2]s, %[4]s)
local first = e - n
if e > n and first >= t0 and e <= t0 + S then %[3]s end
`, S, luaQuote(p.counterFieldV1()), ret("first", "first - t0", "n"), incr)
	b.WriteString(luaInt)
	fmt.Fprintf(b, `local nowUs = s * 1000000 + us
local prev = first
if prev == 0 then
  local st = redis.call('HMGET', KEYS[2], 'layout', 'tick', 'seq')
  if st[1] ~= %[4]s then
    if st[1] and st[1] ~= %[5]s then
      redis.call('HDEL', KEYS[2], %[2]s)
      return {6, st[1]}
    end
    if st[2] and st[3] then prev = tonumber(st[2]) * S + tonumber(st[3]) + 1 end
    redis.call('HDEL', KEYS[2], 'tick', 'seq')
    redis.call('HSET', KEYS[2], 'layout', %[4]s)
  end
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
`, S, luaQuote(p.counterFieldV1()), ret("first", "first - t0", "n"), luaQuote(p.markerV1()), luaQuote(p.layout),
		ret("t0", "0", "n"), ret("prev", "prev - t0", "g"), p.unit, p.epoch)
}

// hashScript writes the hash format's part of issueScript: the state is the last
