package redisstore

// The scripts share one key list, in this order (see keys in redisstore.go):
//
//	KEYS[1] marks   hash  member -> high-water mark (never expires, never deleted)
//	KEYS[2] held    zset  member, score = expiry in Unix ms by Redis TIME
//	KEYS[3] free    zset  member, score = mark: values with a record and no lease
//	KEYS[4] tokens  hash  member -> token of the lease in held
//	KEYS[5] owners  hash  member -> owner of the lease in held
//	KEYS[6] next    string: no value below it is without a record (values at or
//	                above it may have one, claimed by AcquireValue)
//	KEYS[7] epochs  hash  member -> epoch, the count of the value's writes (never
//	                deleted; absent for values of an older flurry, which count from 0)
//
// A member is the value in seven zero-padded digits ("0000042"), so that the members
// of equal score sort by value. Marks are decimal strings compared by length, then
// bytes, so that they never pass through Lua's doubles.
//
// The expiry is judged by Redis TIME inside the scripts, so clients' clocks do not
// matter. Redis 5 and later replicate scripts by their effects, which allows writes
// after TIME; the pcall turns that mode on in Redis 3.2 and 4 and is a no-op after.

const prelude = `
pcall(redis.replicate_commands)
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)

local function greater(a, b)
  if #a ~= #b then return #a > #b end
  return a > b
end

-- reap moves the leases that expired by now to the free set, with their marks.
local function reap()
  local gone = redis.call('ZRANGEBYSCORE', KEYS[2], '-inf', now)
  for _, m in ipairs(gone) do
    redis.call('ZREM', KEYS[2], m)
    redis.call('HDEL', KEYS[4], m)
    redis.call('HDEL', KEYS[5], m)
    redis.call('ZADD', KEYS[3], redis.call('HGET', KEYS[1], m) or '0', m)
  end
end

-- live reports whether member m is held by a lease with token tok that has not
-- expired. An expired lease is reaped on the way.
local function live(m, tok)
  local exp = redis.call('ZSCORE', KEYS[2], m)
  if not exp or redis.call('HGET', KEYS[4], m) ~= tok then return false end
  if tonumber(exp) <= now then
    reap()
    return false
  end
  return true
end

-- bump counts one more write of m and returns its epoch.
local function bump(m)
  return redis.call('HINCRBY', KEYS[7], m, 1)
end

-- raise sets m's mark to mark when that is higher, and returns the mark.
local function raise(m, mark)
  local cur = redis.call('HGET', KEYS[1], m) or '0'
  if greater(mark, cur) then
    redis.call('HSET', KEYS[1], m, mark)
    return mark
  end
  return cur
end
`

// acquireScript: ARGV size, owner, token, ttl ms.
// Returns {-1} when every value is held, else {value, mark, expires ms, epoch}.
const acquireScript = prelude + `
reap()
local size = tonumber(ARGV[1])
local nxt = tonumber(redis.call('GET', KEYS[6]) or '0')
-- Values that AcquireValue claimed have a record: the free set or held covers them.
while nxt < size and redis.call('HEXISTS', KEYS[1], string.format('%07d', nxt)) == 1 do
  nxt = nxt + 1
end
-- The free value with the lowest mark, then the lowest value, below size. Values
-- at or above size are left by callers that used a larger pool for this scope.
local cand, cmark
local i = 0
while not cand do
  local batch = redis.call('ZRANGE', KEYS[3], i, i + 63, 'WITHSCORES')
  if #batch == 0 then break end
  for j = 1, #batch, 2 do
    if tonumber(batch[j]) < size then
      cand, cmark = batch[j], tonumber(batch[j + 1])
      break
    end
  end
  i = i + 64
end
-- A never-used value has mark 0; among marks of 0 the lower value wins.
local m
if nxt < size and (not cand or cmark > 0 or tonumber(cand) > nxt) then
  m = string.format('%07d', nxt)
  redis.call('SET', KEYS[6], string.format('%d', nxt + 1))
  redis.call('HSET', KEYS[1], m, '0')
elseif cand then
  m = cand
  redis.call('ZREM', KEYS[3], m)
else
  return {-1}
end
local exp = now + tonumber(ARGV[4])
redis.call('ZADD', KEYS[2], exp, m)
redis.call('HSET', KEYS[4], m, ARGV[3])
redis.call('HSET', KEYS[5], m, ARGV[2])
return {tonumber(m), redis.call('HGET', KEYS[1], m), exp, bump(m)}
`

// acquireValueScript: ARGV member, owner, token, ttl ms.
// Returns {-1} when the value is held, else {value, mark, expires ms, epoch}.
const acquireValueScript = prelude + `
reap()
local m = ARGV[1]
if redis.call('ZSCORE', KEYS[2], m) then return {-1} end
if redis.call('HEXISTS', KEYS[1], m) == 0 then
  redis.call('HSET', KEYS[1], m, '0')
end
redis.call('ZREM', KEYS[3], m)
local exp = now + tonumber(ARGV[4])
redis.call('ZADD', KEYS[2], exp, m)
redis.call('HSET', KEYS[4], m, ARGV[3])
redis.call('HSET', KEYS[5], m, ARGV[2])
return {tonumber(m), redis.call('HGET', KEYS[1], m), exp, bump(m)}
`

// renewScript: ARGV member, token, ttl ms, mark.
// Returns {0} when the lease is not live, else {1, mark, expires ms, epoch}.
const renewScript = prelude + `
local m = ARGV[1]
if not live(m, ARGV[2]) then return {0} end
local mark = raise(m, ARGV[4])
local exp = now + tonumber(ARGV[3])
redis.call('ZADD', KEYS[2], exp, m)
return {1, mark, exp, bump(m)}
`

// takeoverScript: ARGV member, token, new token, owner, ttl ms, mark.
// Returns {0} when the lease is not live, else {1, the mark before the raise,
// expires ms, epoch}.
const takeoverScript = prelude + `
local m = ARGV[1]
if not live(m, ARGV[2]) then return {0} end
local before = redis.call('HGET', KEYS[1], m) or '0'
raise(m, ARGV[6])
local exp = now + tonumber(ARGV[5])
redis.call('ZADD', KEYS[2], exp, m)
redis.call('HSET', KEYS[4], m, ARGV[3])
redis.call('HSET', KEYS[5], m, ARGV[4])
return {1, before, exp, bump(m)}
`

// releaseScript: ARGV member, token, mark. The releasing holder knows how far it
// really issued, so its mark is set even when below the reservation (see
// lease.Store.Release).
// Returns {0} when the lease is not live, else {1, mark}.
const releaseScript = prelude + `
local m = ARGV[1]
if not live(m, ARGV[2]) then return {0} end
local mark = ARGV[3]
redis.call('HSET', KEYS[1], m, mark)
redis.call('ZREM', KEYS[2], m)
redis.call('HDEL', KEYS[4], m)
redis.call('HDEL', KEYS[5], m)
redis.call('ZADD', KEYS[3], mark, m)
return {1, mark}
`

// listScript reads a scope in one step: {now, marks, held, tokens, owners, epochs},
// the hashes and the zset as flat field/value arrays. KEYS as above.
const listScript = `
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
return {now, redis.call('HGETALL', KEYS[1]), redis.call('ZRANGE', KEYS[2], 0, -1, 'WITHSCORES'),
  redis.call('HGETALL', KEYS[4]), redis.call('HGETALL', KEYS[5]), redis.call('HGETALL', KEYS[7])}
`

// scopeMarkScript: ARGV member to leave out. Returns the highest mark, as a
// decimal string, of the scope's values that no live lease holds but that member:
// the free set's (its scores are the marks, as doubles, so the members of the top
// score are compared by their exact marks) and those of leases that expired by
// now and were not reaped yet. It writes nothing. KEYS as above.
const scopeMarkScript = `
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local skip = ARGV[1]

local function greater(a, b)
  if #a ~= #b then return #a > #b end
  return a > b
end

local best = '0'
local function consider(m)
  if m == skip then return end
  local mk = redis.call('HGET', KEYS[1], m) or '0'
  if string.sub(mk, 1, 1) ~= '-' and greater(mk, best) then best = mk end
end

local top
local i = 0
while not top do
  local batch = redis.call('ZREVRANGE', KEYS[3], i, i + 1, 'WITHSCORES')
  if #batch == 0 then break end
  for j = 1, #batch, 2 do
    if batch[j] ~= skip then
      top = batch[j + 1]
      break
    end
  end
  i = i + 2
end
if top then
  for _, m in ipairs(redis.call('ZRANGEBYSCORE', KEYS[3], top, '+inf')) do consider(m) end
end
for _, m in ipairs(redis.call('ZRANGEBYSCORE', KEYS[2], '-inf', now)) do consider(m) end
return best
`
