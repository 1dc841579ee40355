import { LuaScript } from './lua.js'

// Every multi-key step is one Lua script: atomic on the primary, and sent by
// SHA (EVALSHA) after the first call, so a round trip carries a few bytes.
// Time is the server's (TIME), never a process's clock.

const PRELUDE = `
local function now_ms()
  local t = redis.call('TIME')
  return tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
end
local function run_id()
  return string.match(redis.call('INFO', 'server'), 'run_id:(%w+)')
end
local function keep_for(key, ms)
  local left = redis.call('PTTL', key)
  if left < ms then redis.call('PEXPIRE', key, ms) end
end
`

// Every redis.call costs the server about as much as a whole plain command
// sent by a client would, so the uncontended path makes as few as it can.
// A key with one slot (every strategy but serialize with concurrency > 1)
// keeps its holder in a string with a PX lease, as a hand-written lock would:
// one SET takes it, Redis expires it, no clock reading, no set to build and
// tear down. A key with more slots keeps a sorted set of holders scored by
// lease expiry (server time). The waiters' bookkeeping is only read when a
// queue exists, and the fence counter is created by its INCR.
const ACQUIRE_HELPERS = `
local now_v
local function now()
  if not now_v then now_v = now_ms() end
  return now_v
end
local function purge_waiters(queue, wexp)
  local gone = redis.call('ZRANGEBYSCORE', wexp, '-inf', now())
  if #gone > 0 then
    redis.call('ZREM', queue, unpack(gone))
    redis.call('ZREM', wexp, unpack(gone))
  end
end
-- Live holders: the lock's holder, or the unexpired members of the set (expired ones are dropped).
local function live(holders, single)
  if single then return redis.call('EXISTS', holders) end
  local held = redis.call('ZCARD', holders)
  if held > 0 then held = held - redis.call('ZREMRANGEBYSCORE', holders, '-inf', now()) end
  return held
end
-- held: live holders before this grant (a set that was empty is new, so it has no TTL yet).
local function grant(fence, holders, single, id, lease, fence_ttl, held)
  local token = redis.call('INCR', fence)
  if token == 1 then
    -- A new counter is seeded from the server's clock: after a restart that
    -- emptied Redis, new tokens still exceed every token handed out before it.
    token = now() * 1000 + 1
    redis.call('SET', fence, string.format('%d', token), 'PX', fence_ttl)
  elseif token % 16 == 0 then
    -- Refreshed every 16th grant: its TTL (a day at least) dwarfs any gap, and
    -- a counter that does expire is seeded again from the clock, still larger.
    redis.call('PEXPIRE', fence, fence_ttl)
  end
  if single then
    redis.call('SET', holders, id, 'PX', lease)
  else
    redis.call('ZADD', holders, now() + lease, id)
    if held == 0 then redis.call('PEXPIRE', holders, lease) else keep_for(holders, lease) end
  end
  return token
end
`

// A single-slot key whose holder leaves (a release, or a waiter that held it
// and gave up) goes straight to the first live waiter: the script grants it
// and tells the waiter on the key's channel, so a hand-off costs the waiter
// no round trip (it only listens). A waiter that missed the message finds the
// lock in its name at its next re-check. It returns what it published (the
// waiter's id, fence and server), or nil: a release hands its reply to a
// waiter of its own process at once. Needs ACQUIRE_HELPERS.
const HAND_OVER = `
local function hand_over(lock, queue, wexp, fence, channel, lease, fence_ttl, with_run_id)
  if redis.call('EXISTS', queue) == 0 then return end
  purge_waiters(queue, wexp)
  local head = redis.call('ZRANGE', queue, 0, 0)[1]
  if not head then return end
  redis.call('ZREM', queue, head)
  redis.call('ZREM', wexp, head)
  local token = grant(fence, lock, true, head, lease, fence_ttl, 0)
  local server = ''
  if with_run_id == '1' then server = run_id() end
  local fence_text = string.format('%d', token)
  redis.call('SPUBLISH', channel, 'g\\n' .. head .. '\\n' .. fence_text .. '\\n' .. server)
  return {head, fence_text, server}
end
`

/**
 * A grant. Every mode sends only what it reads (each argument is work for
 * the client and the server, twice per call). `holders` is the key's lock (a
 * string) when it has one slot, else its set of holders.
 *
 * | mode                  | KEYS                              | ARGV after id, mode, leaseMs, fenceTtlMs, withRunId ('1' / '0') |
 * | --------------------- | --------------------------------- | ---------------------------------------------------------------- |
 * | try (exhaust)         | fence, holders                    | limit                                                            |
 * | take (restart)        | fence, lock                       | channel                                                          |
 * | lead (dedupe)         | fence, lock, result, followers    | —                                                                |
 * | queue (serialize)     | fence, holders, queue, wexp       | limit                                                            |
 * | latest (keepLatest)   | fence, lock, queue, wexp          | limit, channel, recheck ('1': asked before and was queued)        |
 *
 * → {1, token, runId, evicted…} granted | {0, position, runId, ids…} waiting | {2, payload} dedupe result
 * | {3} superseded (a keepLatest re-check)
 * (runId is '' unless asked: a waiting reply names the server too, so a
 * process that only ever waited knows it when a release hands it the key)
 */
const ACQUIRE = `${PRELUDE}${ACQUIRE_HELPERS}
local fence, holders = KEYS[1], KEYS[2]
local id, mode, lease, fence_ttl = ARGV[1], ARGV[2], tonumber(ARGV[3]), tonumber(ARGV[4])
-- The run_id costs a whole INFO: only a client that does not know it yet asks.
local function server()
  if ARGV[5] == '1' then return run_id() end
  return ''
end
if mode == 'take' then
  -- The live holder is evicted (an expired one is gone with its lock).
  local holder = redis.call('GET', holders)
  local token = grant(fence, holders, true, id, lease, fence_ttl, 0)
  if holder then
    redis.call('SPUBLISH', ARGV[6], 'x\\n' .. holder)
    return {1, token, server(), holder}
  end
  return {1, token, server()}
end
if mode == 'lead' then
  local result, followers = KEYS[3], KEYS[4]
  local done = redis.call('GET', result)
  if done then return {2, done} end
  local holder = redis.call('GET', holders)
  if not holder then return {1, grant(fence, holders, true, id, lease, fence_ttl, 0), server()} end
  -- Someone waits for the leader's value: only then does its release publish it.
  redis.call('SET', followers, '1', 'PX', lease)
  return {0, 0, server(), holder}
end
local limit = tonumber(ARGV[6])
local single = limit == 1
local held
if single and mode ~= 'try' then
  local holder = redis.call('GET', holders)
  if holder == id then
    -- A release handed the key to this waiting call (its message may be lost or still on the way).
    local token = redis.call('GET', fence)
    if token then
      redis.call('PEXPIRE', holders, lease)
      return {1, tonumber(token), server()}
    end
    redis.call('DEL', holders)
    holder = false
  end
  if holder then held = 1 else held = 0 end
else
  held = live(holders, single)
end
if mode == 'try' then
  if held < limit then return {1, grant(fence, holders, single, id, lease, fence_ttl, held), server()} end
  return {0, 0, server()}
end
-- queue (serialize) and latest (keepLatest): the only modes with waiters.
local queue, wexp = KEYS[3], KEYS[4]
local rank, queued = 0, false
if redis.call('EXISTS', queue) == 1 then
  purge_waiters(queue, wexp)
  rank = redis.call('ZRANK', queue, id)
  queued = rank ~= false
  if not queued then rank = redis.call('ZCARD', queue) end
end
-- A keepLatest waiter that asks again but is out of the line was superseded
-- (its message went unheard): it must not come back in ahead of the newer call.
if mode == 'latest' and ARGV[8] == '1' and not queued then return {3} end
if held + rank < limit then
  if queued then
    redis.call('ZREM', queue, id)
    redis.call('ZREM', wexp, id)
  end
  return {1, grant(fence, holders, single, id, lease, fence_ttl, held), server()}
end
local superseded = {}
if not queued then
  if mode == 'latest' then
    superseded = redis.call('ZRANGE', queue, 0, -1)
    if #superseded > 0 then
      redis.call('DEL', queue)
      redis.call('ZREM', wexp, unpack(superseded))
      redis.call('SPUBLISH', ARGV[7], 's\\n' .. table.concat(superseded, '\\n'))
    end
    rank = 0
  end
  local last = redis.call('ZRANGE', queue, -1, -1, 'WITHSCORES')
  local seq = 1
  if last[2] then seq = tonumber(last[2]) + 1 end
  redis.call('ZADD', queue, seq, id)
end
redis.call('ZADD', wexp, now() + lease, id)
keep_for(queue, lease)
keep_for(wexp, lease)
return {0, rank, server(), unpack(superseded)}
`

/**
 * KEYS: holders (lock or set); ARGV: id, leaseMs, single ('1' / '0'), runId
 * → 1 renewed | 0 not the holder any more | -1 another Redis (restarted) granted it
 *
 * Checks the run_id as ASSERT does: a Redis restarted from a snapshot may
 * still hold the lock, but never honours a grant of the server before it.
 */
const RENEW = `${PRELUDE}
local holders, id, lease = KEYS[1], ARGV[1], tonumber(ARGV[2])
if run_id() ~= ARGV[4] then return -1 end
if ARGV[3] == '1' then
  if redis.call('GET', holders) ~= id then return 0 end
  redis.call('PEXPIRE', holders, lease)
  return 1
end
local now = now_ms()
local until_ = redis.call('ZSCORE', holders, id)
if not until_ or tonumber(until_) <= now then return 0 end
redis.call('ZADD', holders, 'XX', now + lease, id)
keep_for(holders, lease)
return 1
`

/** KEYS: holders (lock or set); ARGV: id, runId, single → 1 current | 0 not the holder | -1 another Redis (restarted) */
const ASSERT = `${PRELUDE}
if run_id() ~= ARGV[2] then return -1 end
if ARGV[3] == '1' then
  if redis.call('GET', KEYS[1]) == ARGV[1] then return 1 end
  return 0
end
local until_ = redis.call('ZSCORE', KEYS[1], ARGV[1])
if not until_ or tonumber(until_) <= now_ms() then return 0 end
return 1
`

/**
 * Drops the holder. kind \`result\` (a dedupe leader) stores and publishes its
 * outcome when a caller in another process waits for it (followers), and only
 * while it still holds the key: a fenced-out leader's late value reaches no
 * one. kind \`wake\` wakes those followers (they are in no queue). \`plain\`
 * hands a single-slot key to the first live waiter (see HAND_OVER), or wakes
 * the first waiter of a key with more slots.
 *
 * | kind   | KEYS                          | ARGV                                                          |
 * | ------ | ----------------------------- | ------------------------------------------------------------- |
 * | plain  | holders, queue, wexp, fence   | id, kind, channel, single, leaseMs, fenceTtlMs, withRunId     |
 * | wake   | lock, followers               | id, kind, channel, '1'                                        |
 * | result | lock, result, followers       | id, kind, channel, '1', leaseMs, payload                      |
 *
 * → 1 released | 0 was not holding | {id, fence, server} released and handed
 * the key to the waiter `id` (plain, single: what its channel was told)
 */
const RELEASE = `${PRELUDE}${ACQUIRE_HELPERS}${HAND_OVER}
local id, kind, channel, single = ARGV[1], ARGV[2], ARGV[3], ARGV[4] == '1'
if single then
  if redis.call('GET', KEYS[1]) ~= id then return 0 end
  redis.call('DEL', KEYS[1])
elseif redis.call('ZREM', KEYS[1], id) == 0 then
  return 0
end
if kind == 'result' then
  if redis.call('DEL', KEYS[3]) == 0 then return 1 end
  redis.call('SET', KEYS[2], ARGV[6], 'PX', tonumber(ARGV[5]))
  redis.call('SPUBLISH', channel, 'r\\n' .. id .. '\\n' .. ARGV[6])
elseif kind == 'wake' then
  if redis.call('DEL', KEYS[2]) == 1 then redis.call('SPUBLISH', channel, 'w') end
elseif single then
  local handed = hand_over(KEYS[1], KEYS[2], KEYS[3], KEYS[4], channel, tonumber(ARGV[5]), tonumber(ARGV[6]), ARGV[7])
  if handed then return handed end
else
  -- One slot came free: wake the first waiter only, not the whole line.
  local head = redis.call('ZRANGE', KEYS[2], 0, 0)[1]
  if head then redis.call('SPUBLISH', channel, 'w\\n' .. head) end
end
return 1
`

/**
 * A waiter gives up: its place in the queue, or the key itself when a
 * release handed it over meanwhile (then the key goes on to the next waiter).
 * KEYS: queue, wexp, holders, fence; ARGV: id, channel, single, leaseMs, fenceTtlMs, withRunId
 * → 1 left | 0 was neither queued nor holding
 */
const LEAVE = `${PRELUDE}${ACQUIRE_HELPERS}${HAND_OVER}
local queue, wexp, holders, fence = KEYS[1], KEYS[2], KEYS[3], KEYS[4]
local id, channel, single = ARGV[1], ARGV[2], ARGV[3] == '1'
local lease, fence_ttl, with_run_id = tonumber(ARGV[4]), tonumber(ARGV[5]), ARGV[6]
if single and redis.call('GET', holders) == id then
  redis.call('DEL', holders)
  hand_over(holders, queue, wexp, fence, channel, lease, fence_ttl, with_run_id)
  return 1
end
local rank = redis.call('ZRANK', queue, id)
if rank == false then return 0 end
redis.call('ZREM', queue, id)
redis.call('ZREM', wexp, id)
if rank ~= 0 then return 1 end
-- The head left: the one behind it may now fit.
if single then
  if redis.call('EXISTS', holders) == 0 then
    hand_over(holders, queue, wexp, fence, channel, lease, fence_ttl, with_run_id)
  end
else
  local head = redis.call('ZRANGE', queue, 0, 0)[1]
  if head then redis.call('SPUBLISH', channel, 'w\\n' .. head) end
end
return 1
`

export const scripts: {
  readonly acquire: LuaScript
  readonly renew: LuaScript
  readonly assert: LuaScript
  readonly release: LuaScript
  readonly leave: LuaScript
} = {
  acquire: new LuaScript(ACQUIRE),
  renew: new LuaScript(RENEW),
  assert: new LuaScript(ASSERT),
  release: new LuaScript(RELEASE),
  leave: new LuaScript(LEAVE),
}
