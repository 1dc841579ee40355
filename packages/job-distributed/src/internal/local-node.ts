import { randomBytes } from 'node:crypto'
import type { CoordinationContext } from '@vega/job-coordination'
import type { PluginHost, Task } from '@vega/job-core'
import type { Codec } from '../codec.js'
import { type Deferred, deferred } from '../deferred.js'
import type { CoordinationEngine, HandOff, WakeListener, WakeMessage } from '../engine.js'
import type { LeaderContext } from '../leader-context.js'
import type { Lease } from './lease.js'
import type { Waiter, WaiterRegistry } from './waiter.js'

export interface Located {
  readonly host: PluginHost
  /** The runtime's own task behind `ctx.intent` (what host.onSettled / onExited take). */
  readonly task: Task<unknown>
}

/**
 * Everything one coordination keeps in this process: the runtimes it serves,
 * its waiters and leases (by id, for wake-ups), and the releases still on the
 * wire (awaited at shutdown). The engine delivers wake-ups to it.
 */
export class LocalNode implements WaiterRegistry, WakeListener {
  readonly byHash: Map<string, Set<Waiter>> = new Map()
  readonly byId: Map<string, Waiter> = new Map()
  readonly leases: Map<string, Lease> = new Map()
  readonly hosts: Set<PluginHost> = new Set()
  /** Ids of this process's holders and waiters start with it (a restart tells local from remote). */
  readonly origin: string = `${randomBytes(4).toString('hex')}-${process.pid}`
  private counter = 0
  /** How often a waiter of this process asked again on its polling floor, and found its turn had come. */
  private floorRechecks = 0
  private floorWakeUps = 0

  constructor(
    readonly io: CoordinationEngine,
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

  /** The host and task behind a coordination context; a TypeError naming `strategy` when the plugin is missing. */
  locate(ctx: CoordinationContext, strategy: string): Located {
    // O(runtimes served), not O(live tasks): a busy process has thousands of waiting calls.
    const task = ctx.task
    for (const host of this.hosts) {
      if (host.owns(task)) return { host, task }
    }
    const { handle, factory } = this.io
    throw new TypeError(
      `${handle}.${strategy}: this runtime does not have the ${handle}'s plugin; create it with createRuntime({ plugins: [installCoordination, ${handle}.plugin] }) using the same ${factory}(…) result.`,
    )
  }

  /** Releases on the wire (each settles within connectTimeoutMs), and who waits for there to be none. */
  private releasing = 0
  private drained: Deferred<void> | undefined

  releaseStarted(): void {
    this.releasing++
  }

  handedOff(handOff: HandOff): void {
    this.byId.get(handOff.id)?.handed(handOff.fence, handOff.server)
  }

  flooredOut(turnCame: boolean): void {
    this.floorRechecks++
    if (turnCame) this.floorWakeUps++
  }

  counters(): { floorRechecks: number; floorWakeUps: number } {
    return { floorRechecks: this.floorRechecks, floorWakeUps: this.floorWakeUps }
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

  /**
   * What the key's waiters may have missed before their wake-ups were sure
   * to arrive. A serialize line (one slot) only misses a hand-off, which
   * left the key under a waiter's id: one read for the whole line finds it.
   * Other waiters (at most one per process and key for dedupe and
   * keepLatest, as local peers are decided locally) ask again.
   */
  recheck(hash: string): void {
    let inLine = false
    for (const waiter of [...(this.byHash.get(hash) ?? [])]) {
      if (waiter.mode === 'queue' && waiter.limit === 1) inLine = true
      else waiter.poll()
    }
    if (!inLine) return
    this.io.holderOf(hash).then(
      (holder) => {
        if (holder !== null) this.byId.get(holder)?.poll()
      },
      () => {}, // unreachable: the waiters' polling floor covers it
    )
  }

  inspect(): { waiters: number; leases: number; keys: number } {
    return { waiters: this.byId.size, leases: this.leases.size, keys: this.byHash.size }
  }

  /** A wake-up about a key (WakeListener). */
  hear(hash: string, message: WakeMessage): void {
    switch (message.kind) {
      case 'result':
        for (const waiter of [...(this.byHash.get(hash) ?? [])]) {
          if (waiter.mode !== 'lead') continue
          if (waiter.follow === message.leader && message.payload !== undefined) {
            waiter.finish({ kind: 'result', payload: message.payload })
          } else waiter.poll()
        }
        return
      case 'handed':
        this.byId.get(message.id)?.handed(message.fence, message.server)
        return
      case 'wake':
        if (message.head !== undefined) this.byId.get(message.head)?.poll()
        else for (const waiter of [...(this.byHash.get(hash) ?? [])]) waiter.poll()
        return
      case 'evicted':
        for (const id of message.ids) this.leases.get(id)?.evict()
        return
      case 'superseded':
        for (const id of message.ids) this.byId.get(id)?.finish({ kind: 'superseded' })
        return
    }
  }
}
