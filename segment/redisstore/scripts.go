package redisstore

// The scripts of one tag share one key list, in this order (see keys in
// redisstore.go):
//
//	KEYS[1] tag       hash: max, step, desc, updated
//	KEYS[2] returned  zset: members "first:last", both 19-digit zero-padded, all scored 0
//
// Counter values never pass through Lua's numbers, which are doubles and lose
// precision above 2^53: max is a decimal string compared by length, then bytes;
// the sum max(max, floor) + n is made by HINCRBY, Redis's exact 64-bit integer
// add, after the client computed limit - n and the script checked that the base
// does not pass it; the returned blocks are found by ZRANGEBYLEX on their padded
// members, never by their (double) scores.
//
// Updated is Redis TIME in Unix ms, kept as a string. Redis 5 and later replicate
// scripts by their effects, which allows writes after TIME; the pcall turns that
// mode on in Redis 3.2 and 4 and is a no-op after.

const prelude = `
pcall(redis.replicate_commands)
local function now()
  local t = redis.call('TIME')
  return t[1] .. string.format('%03d', math.floor(tonumber(t[2]) / 1000))
end

local function greater(a, b)
  if #a ~= #b then return #a > #b end
  return a > b
end
`

// takeScript claims the lowest returned block whose first is above floor, or n
// fresh values above max(max, floor).
//
//	ARGV[1] floor, 19-digit padded
//	ARGV[2] floor, decimal
//	ARGV[3] limit - n, decimal, or "-1" when n passes limit
//	ARGV[4] n, decimal
//
// Replies: {0} unknown tag; {1, step, last} a fresh block ending at last;
// {2, step, member} a returned block; {3, base} the fresh block would pass limit.
const takeScript = prelude + `
local step = redis.call('HGET', KEYS[1], 'step')
if not step then return {0} end
local m = redis.call('ZRANGEBYLEX', KEYS[2], '[' .. ARGV[1] .. ';', '+', 'LIMIT', 0, 1)
if m[1] then
  redis.call('ZREM', KEYS[2], m[1])
  return {2, step, m[1]}
end
local base = redis.call('HGET', KEYS[1], 'max')
if greater(ARGV[2], base) then base = ARGV[2] end
if ARGV[3] == '-1' or greater(base, ARGV[3]) then return {3, base} end
redis.call('HSET', KEYS[1], 'max', base, 'updated', now())
redis.call('HINCRBY', KEYS[1], 'max', ARGV[4])
return {1, step, redis.call('HGET', KEYS[1], 'max')}
`

// returnScript adds a block to the returned set, unless it passes max or overlaps
// a block waiting there.
//
//	ARGV[1] member "first:last"
//	ARGV[2] first, 19-digit padded
//	ARGV[3] last, 19-digit padded
//	ARGV[4] last, decimal
//
// Replies: {0} unknown tag; {1} done; {4, max} last is above max; {5, member} the
// block overlaps that returned block.
const returnScript = prelude + `
local max = redis.call('HGET', KEYS[1], 'max')
if not max then return {0} end
if greater(ARGV[4], max) then return {4, max} end
local prev = redis.call('ZREVRANGEBYLEX', KEYS[2], '[' .. ARGV[2] .. ';', '-', 'LIMIT', 0, 1)
if prev[1] and string.sub(prev[1], 21) >= ARGV[2] then return {5, prev[1]} end
local nxt = redis.call('ZRANGEBYLEX', KEYS[2], '[' .. ARGV[2] .. ';', '+', 'LIMIT', 0, 1)
if nxt[1] and string.sub(nxt[1], 1, 19) <= ARGV[3] then return {5, nxt[1]} end
redis.call('ZADD', KEYS[2], 0, ARGV[1])
redis.call('HSET', KEYS[1], 'updated', now())
return {1}
`

// createScript makes the tag's hash unless it exists.
//
//	ARGV[1] max (the start), decimal
//	ARGV[2] step, decimal
//	ARGV[3] description
//
// Replies: {0} the tag exists; {1} done.
const createScript = prelude + `
if redis.call('EXISTS', KEYS[1]) == 1 then return {0} end
redis.call('HSET', KEYS[1], 'max', ARGV[1], 'step', ARGV[2], 'desc', ARGV[3], 'updated', now())
return {1}
`

// setStepScript changes the step of an existing tag.
//
//	ARGV[1] step, decimal
//
// Replies: {0} unknown tag; {1} done.
const setStepScript = prelude + `
if redis.call('EXISTS', KEYS[1]) == 0 then return {0} end
redis.call('HSET', KEYS[1], 'step', ARGV[1], 'updated', now())
return {1}
`
