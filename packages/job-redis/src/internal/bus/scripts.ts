import { LuaScript } from '../lua.js'

// The package's one loader also sends the bus's pipelined EVALSHAs their scripts first.
export { preload } from '../lua.js'

import type { RedisClient } from '../redis-io.js'

// The bus's atomic steps. Each touches the keys of one slot: one partition
// (its stream, lease, fence counter, dead letters and wake-up channel share a
// hash tag) or the aggregate's membership. Each partition step checks the
// partition's ownership token first, so a consumer whose lease ended (paused,
// partitioned, slow) can neither read nor acknowledge: fencing on the server,
// not in the consumer's memory. Time is the server's (TIME).

const NOW = `
local function now_ms()
  local t = redis.call('TIME')
  return tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
end
`

/**
 * KEYS: stream, idle; ARGV: wake channel, id, body
 * Appends a message; wakes the partition's owner if it had read everything
 * (a busy owner reads on anyway: no message per send). → the entry id
 */
const SEND = `
local entry = redis.call('XADD', KEYS[1], '*', 'i', ARGV[2], 'b', ARGV[3])
if redis.call('DEL', KEYS[2]) == 1 then redis.call('SPUBLISH', ARGV[1], '') end
return entry
`

/**
 * KEYS: members; ARGV: me, leaseMs, want (1|0), ctl channel
 * Joins (or renews) or leaves the live consumers; drops the expired. When
 * that changed the set, tells every consumer (ctl) to balance now. → live count
 */
const MEMBERS = `${NOW}
local members, me, lease, want, ctl = KEYS[1], ARGV[1], tonumber(ARGV[2]), ARGV[3] == '1', ARGV[4]
local now = now_ms()
local changed = redis.call('ZREMRANGEBYSCORE', members, '-inf', now)
if want then
  changed = changed + redis.call('ZADD', members, now + lease, me)
  redis.call('PEXPIRE', members, lease * 2)
else
  changed = changed + redis.call('ZREM', members, me)
end
if changed > 0 then redis.call('SPUBLISH', ctl, me) end
return redis.call('ZCARD', members)
`

/** KEYS: own; ARGV: token, leaseMs. Extends the lease if the token still holds it. → 1 | 0 */
const RENEW = `
if redis.call('GET', KEYS[1]) ~= ARGV[1] then return 0 end
redis.call('PEXPIRE', KEYS[1], ARGV[2])
return 1
`

/**
 * KEYS: own, fence, stream; ARGV: me, leaseMs, fenceTtlMs, group
 * Takes the partition if nobody holds it, under a new fence. → the fence | 0
 */
const GRANT = `${NOW}
if redis.call('EXISTS', KEYS[1]) == 1 then return 0 end
if redis.call('EXISTS', KEYS[2]) == 0 then
  -- Seeded from the server's clock: after a restart that emptied Redis,
  -- new fences still exceed every fence handed out before.
  redis.call('SET', KEYS[2], string.format('%d', now_ms() * 1000))
end
local f = redis.call('INCR', KEYS[2])
redis.call('PEXPIRE', KEYS[2], ARGV[3])
redis.call('SET', KEYS[1], string.format('%d', f) .. '|' .. ARGV[1], 'PX', ARGV[2])
redis.pcall('XGROUP', 'CREATE', KEYS[3], ARGV[4], '0', 'MKSTREAM')
return f
`

/**
 * KEYS: own, stream, idle per partition (triples); ARGV: group, me, count, idleTtlMs, token per partition
 * Reads new entries of the partitions this consumer still owns, in one
 * XREADGROUP (on a cluster it is called for one partition at a time: one
 * slot). A partition that returned fewer than `count` entries was read to
 * its end: its idle flag is set, so the next send wakes its owner.
 * → { lost partition indexes, XREADGROUP reply or false }
 */
const READ = `
local group, me, count, idle_ttl = ARGV[1], ARGV[2], tonumber(ARGV[3]), ARGV[4]
local lost, streams, idle = {}, {}, {}
for j = 1, #KEYS / 3 do
  if redis.call('GET', KEYS[3 * j - 2]) == ARGV[4 + j] then
    streams[#streams + 1] = KEYS[3 * j - 1]
    idle[KEYS[3 * j - 1]] = KEYS[3 * j]
  else
    lost[#lost + 1] = j
  end
end
if #streams == 0 then return {lost, false} end
local n = #streams
for k = 1, n do streams[n + k] = '>' end
local reply = redis.call('XREADGROUP', 'GROUP', group, me, 'COUNT', count, 'STREAMS', unpack(streams))
local full = {}
if reply then
  for _, s in ipairs(reply) do
    if #s[2] >= count then full[s[1]] = true end
  end
end
for k = 1, n do
  if not full[streams[k]] then redis.call('SET', idle[streams[k]], '1', 'PX', idle_ttl) end
end
return {lost, reply}
`

/**
 * KEYS: own, stream; ARGV: token, group, me, cursor, count
 * Takes over the partition's pending entries (left by an earlier owner, or
 * by this consumer's own earlier lease) in stream order; once all are
 * taken, the earlier owners leave the consumer group.
 * → {0} lost | {1, next cursor, entries, delivery counts}
 */
const CLAIM = `
if redis.call('GET', KEYS[1]) ~= ARGV[1] then return {0} end
local r = redis.call('XAUTOCLAIM', KEYS[2], ARGV[2], ARGV[3], 0, ARGV[4], 'COUNT', ARGV[5])
local entries = r[2]
local counts = {}
if #entries > 0 then
  local pending = redis.call('XPENDING', KEYS[2], ARGV[2], entries[1][1], entries[#entries][1], #entries, ARGV[3])
  local by = {}
  for _, p in ipairs(pending) do by[p[1]] = p[4] end
  for k, e in ipairs(entries) do counts[k] = by[e[1]] or 1 end
end
if r[1] == '0-0' then
  -- Everything pending is this consumer's now: earlier owners leave the
  -- group, so consumers that came and went do not pile up in it.
  for _, info in ipairs(redis.call('XINFO', 'CONSUMERS', KEYS[2], ARGV[2])) do
    local name, pending
    for i = 1, #info, 2 do
      if info[i] == 'name' then name = info[i + 1] end
      if info[i] == 'pending' then pending = info[i + 1] end
    end
    if name ~= ARGV[3] and pending == 0 then
      redis.call('XGROUP', 'DELCONSUMER', KEYS[2], ARGV[2], name)
    end
  end
end
return {1, r[1], entries, counts}
`

/**
 * KEYS: own, stream per partition (pairs); ARGV: group, then per partition: token, n, ids…
 * Acknowledges and deletes handled entries, only where the token still owns
 * the partition (on a cluster called for one partition at a time). → 1 | 0 per partition
 */
const ACK = `
local group = ARGV[1]
local a = 2
local out = {}
for j = 1, #KEYS / 2 do
  local token, n = ARGV[a], tonumber(ARGV[a + 1])
  if redis.call('GET', KEYS[2 * j - 1]) == token then
    local s = KEYS[2 * j]
    local from = a + 2
    while from <= a + 1 + n do
      local to = math.min(from + 499, a + 1 + n)
      redis.call('XACK', s, group, unpack(ARGV, from, to))
      redis.call('XDEL', s, unpack(ARGV, from, to))
      from = to + 1
    end
    out[j] = 1
  else
    out[j] = 0
  end
  a = a + 2 + n
end
return out
`

/**
 * KEYS: own, stream, dead; ARGV: token, group, entry id, then the dead entry's field/value pairs
 * Moves one entry to the partition's dead-letter stream, if the token still owns the partition. → 1 | 0
 */
const DEAD = `
if redis.call('GET', KEYS[1]) ~= ARGV[1] then return 0 end
redis.call('XADD', KEYS[3], '*', unpack(ARGV, 4))
redis.call('XACK', KEYS[2], ARGV[2], ARGV[3])
redis.call('XDEL', KEYS[2], ARGV[3])
return 1
`

/**
 * KEYS: own, stream, idle; ARGV: token
 * Gives a partition back at once (an empty stream goes with its group). → 1 | 0
 */
const RELEASE = `
if redis.call('GET', KEYS[1]) ~= ARGV[1] then return 0 end
redis.call('DEL', KEYS[1], KEYS[3])
if redis.call('XLEN', KEYS[2]) == 0 then redis.call('DEL', KEYS[2]) end
return 1
`

/**
 * KEYS: members; ARGV: me, ctl channel, leaving (1|0)
 * After partitions were given back (or the consumer leaves): tells the
 * others (ctl) so they take them now, not a lease later.
 */
const RELEASED = `
if ARGV[3] == '1' then redis.call('ZREM', KEYS[1], ARGV[1]) end
redis.call('SPUBLISH', ARGV[2], ARGV[1])
return 1
`

/** A bus script: keys and arguments apart, the reply as Redis gave it; sent through the package's one loader. */
export class BusScript {
  private readonly script: LuaScript

  constructor(source: string) {
    this.script = new LuaScript(source)
  }

  get sha(): string {
    return this.script.sha
  }

  run(
    redis: RedisClient,
    keys: readonly string[],
    args: readonly (string | number)[],
  ): Promise<unknown> {
    return this.script.run(redis, keys.length, [...keys, ...args], asIs)
  }
}

const asIs = (reply: unknown): unknown => reply

export const busScripts: {
  readonly send: BusScript
  readonly members: BusScript
  readonly renew: BusScript
  readonly grant: BusScript
  readonly read: BusScript
  readonly claim: BusScript
  readonly ack: BusScript
  readonly dead: BusScript
  readonly release: BusScript
  readonly released: BusScript
} = {
  send: new BusScript(SEND),
  members: new BusScript(MEMBERS),
  renew: new BusScript(RENEW),
  grant: new BusScript(GRANT),
  read: new BusScript(READ),
  claim: new BusScript(CLAIM),
  ack: new BusScript(ACK),
  dead: new BusScript(DEAD),
  release: new BusScript(RELEASE),
  released: new BusScript(RELEASED),
}
