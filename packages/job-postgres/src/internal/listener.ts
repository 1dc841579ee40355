import type { WakeListener, WakeMessage } from '@vega/job-distributed'
import { type ListenConnection, type ListenUser, listenConnectionOf } from './listen-connection.js'

/**
 * The coordination's wake-ups, on its pool's one LISTEN connection (shared
 * with every bus and coordination made with that pool), whatever the number
 * of keys: a NOTIFY only wakes (the tables are the truth, and every waiter
 * re-checks on its floor anyway). When the connection listens again after
 * it ended, every key with waiters is re-checked, since a wake-up sent
 * meanwhile was not heard.
 */
export class Listener implements ListenUser {
  private readonly connection: ListenConnection
  private listener: WakeListener | undefined
  /** md5(key) → key, for the keys this process waits on (a NOTIFY names a key by its md5). */
  private readonly wanted = new Map<string, { readonly hash: string; count: number }>()
  /**
   * Keys heard while nobody here waited on them, by md5, with when: a waiter
   * whose first reply (on a pool connection) comes after the wake-up (on this
   * one) re-checks at once instead of on its floor.
   */
  private readonly unclaimed = new Map<string, number>()

  constructor(
    pool: object,
    readonly channel: string,
    private readonly md5: (text: string) => string,
    readonly connectTimeoutMs: number,
    /** How long a wake-up nobody here waited for still counts for a waiter that arrives (leaseMs). */
    private readonly recentMs: number,
  ) {
    this.connection = listenConnectionOf(pool)
  }

  /** Listens (again, after {@link close}) and hands what it hears to `listener`. */
  start(listener: WakeListener): void {
    if (this.listener !== undefined) return
    this.listener = listener
    this.connection.add(this)
  }

  want(hash: string): void {
    const digest = this.md5(hash)
    const known = this.wanted.get(digest)
    if (known !== undefined) {
      known.count++
      return
    }
    this.wanted.set(digest, { hash, count: 1 })
    const heard = this.unclaimed.get(digest)
    if (heard === undefined) return
    this.unclaimed.delete(digest)
    if (performance.now() - heard < this.recentMs) this.listener?.recheck(hash)
  }

  unwant(hash: string): void {
    const digest = this.md5(hash)
    const known = this.wanted.get(digest)
    if (known === undefined) return
    if (--known.count === 0) this.wanted.delete(digest)
  }

  /** Stops listening; the connection closes when its last user left. */
  close(): Promise<void> {
    if (this.listener === undefined) return Promise.resolve()
    this.listener = undefined
    return this.connection.remove(this)
  }

  listening(): void {
    // Wake-ups sent before this connection listened were not heard.
    for (const { hash } of [...this.wanted.values()]) this.listener?.recheck(hash)
  }

  /** Its waiters re-check on their floor meanwhile. */
  failed(): void {}

  heard(payload: string): boolean {
    const lines = payload.split('\n')
    const digest = lines[0] ?? ''
    const known = this.wanted.get(digest)
    if (known === undefined) {
      this.remember(digest)
      return false
    }
    const message = parse(lines[1] ?? '', lines.slice(2))
    if (this.listener === undefined || message === undefined) return false
    this.listener.hear(known.hash, message)
    return true
  }

  private remember(digest: string): void {
    this.unclaimed.delete(digest)
    this.unclaimed.set(digest, performance.now())
    if (this.unclaimed.size <= UNCLAIMED_KEPT) return
    const oldest = this.unclaimed.keys().next().value
    if (oldest !== undefined) this.unclaimed.delete(oldest)
  }
}

const UNCLAIMED_KEPT = 256

function parse(kind: string, ids: string[]): WakeMessage | undefined {
  switch (kind) {
    case 'g':
      return { kind: 'handed', id: ids[0] ?? '', fence: Number(ids[1]), server: '' }
    case 'w':
      return { kind: 'wake', head: ids[0] }
    case 'x':
      return { kind: 'evicted', ids }
    case 's':
      return { kind: 'superseded', ids }
    case 'r':
      return { kind: 'result', leader: ids[0] ?? '', payload: undefined }
    default:
      return undefined
  }
}
