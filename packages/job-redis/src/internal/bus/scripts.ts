import { createHash } from 'node:crypto'
import type { Redis } from 'ioredis'

// The bus's atomic steps. Each checks the partition's ownership token first,
// so a consumer whose lease ended (paused, partitioned, slow) can neither read
// nor acknowledge: fencing on the server, not in the consumer's memory.
// Time is the server's (TIME). Keys of a partition are derived from a base
// passed in ARGV: the bus targets one primary, not Redis Cluster.

const NOW = `
local function now_ms()
  local t = redis.call('TIME')
  return tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
end
`

/**
 * KEYS: members, ctl
 * ARGV: me, leaseMs, partitions, base, fenceTtlMs, want (1|0), offset, group, then (partition, token) pairs
 * → { live, quota, renewed flags per pair, granted (partition, fence) pairs }
 */
const TICK = `${NOW}
local members, ctl = KEYS[1], KEYS[2]
local me, lease, parts, base = ARGV[1], tonumber(ARGV[2]), tonumber(ARGV[3]), ARGV[4]
local fence_ttl, want, offset, group = tonumber(ARGV[5]), ARGV[6] == '1', tonumber(ARGV[7]), ARGV[8]
local now = now_ms()
redis.call('ZREMRANGEBYSCORE', members, '-inf', now)
local joined = 0
if want then
  joined = redis.call('ZADD', members, now + lease, me)
  redis.call('PEXPIRE', members, lease * 2)
else
  joined = -redis.call('ZREM', members, me)
end
local live = redis.call('ZCARD', members)
local renewed = {}
local held = 0
local i = 9
while i < #ARGV do
  local own = base .. ':own:' .. ARGV[i]
  if redis.call('GET', own) == ARGV[i + 1] then
    redis.call('PEXPIRE', own, lease)
    renewed[#renewed + 1] = 1
    held = held + 1
  else
    renewed[#renewed + 1] = 0
  end
  i = i + 2
end
local quota = parts
if live > 0 then quota = math.ceil(parts / live) end
local granted = {}
if want and held < quota then
  for k = 0, parts - 1 do
    local p = (offset + k) % parts
    local own = base .. ':own:' .. p
    if redis.call('EXISTS', own) == 0 then
      local fence = base .. ':fence:' .. p
      if redis.call('EXISTS', fence) == 0 then
        -- Seeded from the server's clock: after a restart that emptied
        -- Redis, new fences still exceed every fence handed out before.
        redis.call('SET', fence, string.format('%d', now * 1000))
      end
      local f = redis.call('INCR', fence)
      redis.call('PEXPIRE', fence, fence_ttl)
      redis.call('SET', own, string.format('%d', f) .. '|' .. me, 'PX', lease)
      redis.pcall('XGROUP', 'CREATE', base .. ':p:' .. p, group, '0', 'MKSTREAM')
      granted[#granted + 1] = p
      granted[#granted + 1] = f
      held = held + 1
      if held >= quota then break end
    end
  end
end
if joined ~= 0 then
  -- Membership changed: every consumer re-balances now, not a tick later.
  redis.call('XADD', ctl, 'MAXLEN', '~', '64', '*', 'e', me)
  redis.call('PEXPIRE', ctl, fence_ttl)
end
return {live, quota, renewed, granted}
`

/**
 * KEYS: own, stream per partition (pairs); ARGV: group, me, count, token per partition, ctl
 * Reads new entries of the partitions this consumer still owns.
 * → { lost partition indexes, XREADGROUP reply or false, tails (last entry id per partition, on an empty read), ctl tail }
 */
const READ = `
local group, me, count = ARGV[1], ARGV[2], ARGV[3]
local n = #KEYS / 2
local lost, streams, ids, idx = {}, {}, {}, {}
for j = 1, n do
  if redis.call('GET', KEYS[2 * j - 1]) == ARGV[3 + j] then
    streams[#streams + 1] = KEYS[2 * j]
    ids[#ids + 1] = '>'
    idx[#idx + 1] = j
  else
    lost[#lost + 1] = j
  end
end
local ctl = ARGV[4 + n]
local reply = false
if #streams > 0 then
  for k = 1, #ids do streams[#streams + 1] = ids[k] end
  reply = redis.call('XREADGROUP', 'GROUP', group, me, 'COUNT', count, 'STREAMS', unpack(streams))
end
local tails = {}
if not reply then
  for k = 1, #idx do
    local last = redis.call('XREVRANGE', KEYS[2 * idx[k]], '+', '-', 'COUNT', 1)[1]
    tails[#tails + 1] = last and last[1] or '0-0'
  end
end
local ctl_last = redis.call('XREVRANGE', ctl, '+', '-', 'COUNT', 1)[1]
return {lost, reply, tails, ctl_last and ctl_last[1] or '0-0'}
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
 * Acknowledges and deletes handled entries, only where the token still owns the partition.
 * → 1 | 0 per partition
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
 * Moves one entry to the dead-letter stream, if the token still owns the partition. → 1 | 0
 */
const DEAD = `
if redis.call('GET', KEYS[1]) ~= ARGV[1] then return 0 end
redis.call('XADD', KEYS[3], '*', unpack(ARGV, 4))
redis.call('XACK', KEYS[2], ARGV[2], ARGV[3])
redis.call('XDEL', KEYS[2], ARGV[3])
return 1
`

/**
 * KEYS: members, ctl; ARGV: me, base, leaving (1|0), fenceTtlMs, then (partition, token) pairs
 * Gives partitions back at once (an empty stream goes with its group), and
 * tells the others (ctl) so they take them now, not a lease later. → released count
 */
const RELEASE = `
local members, ctl = KEYS[1], KEYS[2]
local me, base, leaving = ARGV[1], ARGV[2], ARGV[3] == '1'
local released = 0
local i = 5
while i < #ARGV do
  local own = base .. ':own:' .. ARGV[i]
  if redis.call('GET', own) == ARGV[i + 1] then
    redis.call('DEL', own)
    local s = base .. ':p:' .. ARGV[i]
    if redis.call('XLEN', s) == 0 then redis.call('DEL', s) end
    released = released + 1
  end
  i = i + 2
end
if leaving then redis.call('ZREM', members, me) end
if released > 0 or leaving then
  redis.call('XADD', ctl, 'MAXLEN', '~', '64', '*', 'e', me)
  redis.call('PEXPIRE', ctl, tonumber(ARGV[4]))
end
return released
`

/** A script sent by SHA; loaded once per client, and again after a restart emptied the script cache. */
export class BusScript {
  readonly sha: string

  constructor(readonly source: string) {
    this.sha = createHash('sha1').update(source).digest('hex')
  }

  async run(
    redis: Redis,
    keys: readonly string[],
    args: readonly (string | number)[],
  ): Promise<unknown> {
    preload(redis)
    try {
      return await redis.evalsha(this.sha, keys.length, ...keys, ...args)
    } catch (error) {
      if (!(error instanceof Error) || !error.message.startsWith('NOSCRIPT')) throw error
      loaded.delete(redis)
      return await redis.eval(this.source, keys.length, ...keys, ...args)
    }
  }
}

const loaded = new WeakSet<Redis>()

// SCRIPT LOAD goes first on the connection, so the EVALSHAs behind it find
// their scripts and no EVAL fallback reorders a step.
function preload(redis: Redis): void {
  if (loaded.has(redis)) return
  loaded.add(redis)
  for (const script of Object.values(busScripts)) {
    redis.script('LOAD', script.source).catch(() => loaded.delete(redis))
  }
}

export const busScripts: {
  readonly tick: BusScript
  readonly read: BusScript
  readonly claim: BusScript
  readonly ack: BusScript
  readonly dead: BusScript
  readonly release: BusScript
} = {
  tick: new BusScript(TICK),
  read: new BusScript(READ),
  claim: new BusScript(CLAIM),
  ack: new BusScript(ACK),
  dead: new BusScript(DEAD),
  release: new BusScript(RELEASE),
}
