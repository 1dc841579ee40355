import { randomBytes } from 'node:crypto'
import type { CoordinationContext } from '@vega/job-coordination'
import type { PluginHost, Task } from '@vega/job-core'
import type { Codec } from '../codec.js'
import type { LeaderContext } from '../leader-context.js'
import { type Deferred, deferred } from './deferred.js'
import type { Lease } from './lease.js'
import type { RedisClient, RedisIO } from './redis-io.js'
import type { Waiter, WaiterRegistry } from './waiter.js'

export interface Located {
  readonly host: PluginHost
  /** The runtime's own task behind `ctx.intent` (what host.onSettled / onExited take). */
  readonly task: Task<unknown>
}

/**
 * Everything one `createRedisCoordination` keeps in this process: the runtimes
 * it serves, its waiters and leases (by id, for pub/sub), the subscriber
 * connection, and the releases still on the wire (awaited at shutdown).
 */
export class Cluster implements WaiterRegistry {
  readonly byHash: Map<string, Set<Waiter>> = new Map()
  readonly byId: Map<string, Waiter> = new Map()
  readonly leases: Map<string, Lease> = new Map()
  readonly hosts: Set<PluginHost> = new Set()
  /** Ids of this process's holders and waiters start with it (a restart tells local from remote). */
  readonly origin: string = `${randomBytes(4).toString('hex')}-${process.pid}`
  private counter = 0
  private subscriber: RedisClient | undefined

  constructor(
    readonly io: RedisIO,
    readonly codec: Codec,
    /** The `leaderContext` option: what a dedupe leader carries to its joiners. */
    readonly leaderContext: LeaderContext | undefined = undefined,
  ) {}

  nextId(taskId: number): string {
    return `${this.origin}.${taskId}.${++this.counter}`
  }

  isLocal(id: string): boolean {
    return id.startsWith(`${this.origin}.`)
  }

  /** The host and task behind a coordination context; a TypeError when `cluster.plugin` is missing. */
  locate(ctx: CoordinationContext, who: string): Located {
    // O(runtimes served), not O(live tasks): a busy process has thousands of waiting calls.
    const task = ctx.task
    for (const host of this.hosts) {
      if (host.owns(task)) return { host, task }
    }
    throw new TypeError(
      `${who}: this runtime does not have the cluster's plugin; create it with createRuntime({ plugins: [installCoordination, cluster.plugin] }) using the same createRedisCoordination(…) result.`,
    )
  }

  /** Releases on the wire (each settles within connectTimeoutMs), and who waits for there to be none. */
  private releasing = 0
  private drained: Deferred<void> | undefined

  releaseStarted(): void {
    this.releasing++
  }

  releaseDone(): void {
    if (--this.releasing > 0) return
    const drained = this.drained
    this.drained = undefined
    drained?.resolve()
  }

  /** Resolves once no release is on the wire (shutdown waits for them, so other processes go on at once). */
  idle(): Promise<void> {
    if (this.releasing === 0) return Promise.resolve()
    this.drained ??= deferred()
    return this.drained.promise
  }

  /** Opens the subscriber connection (once); waiters poll on their floor until it is ready. */
  listen(): void {
    if (this.subscriber !== undefined || this.io.redis.status === 'end') return
    const subscriber = this.io.redis.duplicate()
    this.subscriber = subscriber
    // Errors surface as calls that time out; an unheard message costs at most one polling floor.
    subscriber.on('error', () => {})
    // An auxiliary connection: it never keeps the process alive on its own.
    subscriber.on('connect', () =>
      (subscriber as { stream?: { unref?(): void } }).stream?.unref?.(),
    )
    subscriber.on('message', (_channel: string, message: string) => this.hear(message))
    subscriber.subscribe(this.io.channel).catch(() => {})
  }

  async close(): Promise<void> {
    const subscriber = this.subscriber
    this.subscriber = undefined
    if (subscriber === undefined) return
    subscriber.disconnect()
  }

  inspect(): { waiters: number; leases: number; keys: number } {
    return { waiters: this.byId.size, leases: this.leases.size, keys: this.byHash.size }
  }

  private hear(message: string): void {
    const kind = message[0]
    const lines = kind === 'r' ? splitN(message, 4) : message.split('\n')
    const hash = lines[1]
    if (hash === undefined) return
    if (kind === 'w') {
      const head = lines[2]
      if (head !== undefined) this.byId.get(head)?.poll()
      else for (const waiter of [...(this.byHash.get(hash) ?? [])]) waiter.poll()
    } else if (kind === 'x') {
      for (const id of lines.slice(2)) this.leases.get(id)?.evict()
    } else if (kind === 's') {
      for (const id of lines.slice(2)) this.byId.get(id)?.finish({ kind: 'superseded' })
    } else if (kind === 'r') {
      const leader = lines[2]
      const payload = lines[3] ?? ''
      for (const waiter of [...(this.byHash.get(hash) ?? [])]) {
        if (waiter.mode !== 'lead') continue
        if (waiter.follow === leader) waiter.finish({ kind: 'result', payload })
        else waiter.poll()
      }
    }
  }
}

/** Splits on the first n - 1 newlines: the last part (a payload) may contain any. */
function splitN(text: string, n: number): string[] {
  const parts: string[] = []
  let from = 0
  while (parts.length < n - 1) {
    const at = text.indexOf('\n', from)
    if (at === -1) break
    parts.push(text.slice(from, at))
    from = at + 1
  }
  parts.push(text.slice(from))
  return parts
}
