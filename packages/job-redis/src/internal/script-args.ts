import type { AcquireMode, ReleaseKind, ReleaseRequest } from '@vega/job-distributed'

// The KEYS then ARGV of the coordination scripts, one array per call (see
// the tables in scripts.ts): the layout is the protocol between processes.

/** What a key's script arguments are made of (a RedisIO). */
export interface ArgSource {
  /** `<prefix>:{<hash>}:`, what every key of one coordinated key starts with. */
  base(hash: string): string
  /** The key's sharded wake-up channel. */
  channel(hash: string): string
  readonly leaseArg: string
  readonly fenceTtlArg: string
  /** '1' when a hand-off names its server in its message (a cluster). */
  readonly handOffRunIdArg: string
}

/** A key with one slot keeps its holder in a lock (a string with a PX lease); one with more, in a sorted set. */
export function holdersPart(single: boolean): 'lock' | 'hold' {
  return single ? 'lock' : 'hold'
}

/** How many ARGV each mode of ACQUIRE takes (the rest of its arguments are KEYS). */
export const ACQUIRE_ARGV: Readonly<Record<AcquireMode, number>> = {
  try: 6,
  take: 6,
  lead: 5,
  queue: 6,
  latest: 8,
}

/** KEYS then ARGV of ACQUIRE for one mode. */
export function acquireArgs(
  io: ArgSource,
  hash: string,
  id: string,
  mode: AcquireMode,
  limit: number,
  follow: string,
  recheck: boolean,
  ask: string,
): string[] {
  const base = io.base(hash)
  const { leaseArg, fenceTtlArg } = io
  const fence = `${base}fence`
  const holders = `${base}${holdersPart(mode === 'take' || mode === 'lead' || limit === 1)}`
  switch (mode) {
    case 'try':
      return [fence, holders, id, mode, leaseArg, fenceTtlArg, ask, String(limit)]
    case 'take':
      return [fence, holders, id, mode, leaseArg, fenceTtlArg, ask, io.channel(hash)]
    case 'lead':
      return [
        fence,
        holders,
        `${base}result:${follow}`,
        `${base}followers`,
        id,
        mode,
        leaseArg,
        fenceTtlArg,
        ask,
      ]
    case 'queue':
    case 'latest': {
      const queue = [
        fence,
        holders,
        `${base}queue`,
        `${base}wexp`,
        id,
        mode,
        leaseArg,
        fenceTtlArg,
        ask,
        String(limit),
      ]
      // keepLatest's line also takes the key's channel and whether this is a re-check.
      return mode === 'queue' ? queue : [...queue, io.channel(hash), recheck ? '1' : '0']
    }
  }
}

/** How many KEYS RELEASE takes for each kind. */
export const RELEASE_KEYS: Readonly<Record<ReleaseKind, number>> = { plain: 4, wake: 2, result: 3 }

/** KEYS then ARGV of RELEASE for one kind. */
export function releaseArgs(io: ArgSource, request: ReleaseRequest): string[] {
  const { hash, id, kind, payload, single } = request
  const base = io.base(hash)
  const holders = `${base}${holdersPart(single)}`
  const channel = io.channel(hash)
  switch (kind) {
    case 'plain':
      return [
        holders,
        `${base}queue`,
        `${base}wexp`,
        `${base}fence`,
        id,
        kind,
        channel,
        single ? '1' : '0',
        io.leaseArg,
        io.fenceTtlArg,
        io.handOffRunIdArg,
      ]
    case 'wake':
      return [holders, `${base}followers`, id, kind, channel, '1']
    case 'result':
      return [
        holders,
        `${base}result:${id}`,
        `${base}followers`,
        id,
        kind,
        channel,
        '1',
        io.leaseArg,
        payload,
      ]
  }
}

/** How many KEYS LEAVE takes. */
export const LEAVE_KEYS = 4

/** KEYS then ARGV of LEAVE. */
export function leaveArgs(io: ArgSource, hash: string, id: string, single: boolean): string[] {
  const base = io.base(hash)
  return [
    `${base}queue`,
    `${base}wexp`,
    `${base}${holdersPart(single)}`,
    `${base}fence`,
    id,
    io.channel(hash),
    single ? '1' : '0',
    io.leaseArg,
    io.fenceTtlArg,
    io.handOffRunIdArg,
  ]
}
