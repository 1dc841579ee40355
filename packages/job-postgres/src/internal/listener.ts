import type { WakeListener, WakeMessage } from '@vega/job-distributed'

/** The LISTEN connection's client: a `pg.Client` made from the user's pool's own class and options. */
interface ListenClient {
  connect(): Promise<unknown>
  query(text: string): Promise<unknown>
  end(): Promise<void>
  on(
    event: 'notification',
    listener: (message: { channel: string; payload?: string }) => void,
  ): unknown
  on(event: 'error' | 'end', listener: (error?: unknown) => void): unknown
}

type ClientClass = new (options: object) => ListenClient

/**
 * The process's one LISTEN connection, whatever the number of keys: a
 * NOTIFY only wakes (the tables are the truth, and every waiter re-checks on
 * its floor anyway). A connection that ends (`pg_terminate_backend`, a
 * restart, a network cut) is opened and listened again after a short pause;
 * once it listens again, every key with waiters is re-checked, since a
 * wake-up sent meanwhile was not heard.
 */
export class Listener {
  private client: ListenClient | undefined
  private listener: WakeListener | undefined
  private closed = false
  private retry: NodeJS.Timeout | undefined
  /** md5(key) → key, for the keys this process waits on (a NOTIFY names a key by its md5). */
  private readonly wanted = new Map<string, { readonly hash: string; count: number }>()
  /**
   * Keys heard while nobody here waited on them, by md5, with when: a waiter
   * whose first reply (on a pool connection) comes after the wake-up (on this
   * one) re-checks at once instead of on its floor.
   */
  private readonly unclaimed = new Map<string, number>()
  /** How many times the connection was (re)opened and listening: the tests read it. */
  listens = 0

  constructor(
    private readonly Client: ClientClass,
    private readonly options: object,
    private readonly channel: string,
    private readonly md5: (text: string) => string,
    private readonly reopenMs: number,
    /** How long a wake-up nobody here waited for still counts for a waiter that arrives (leaseMs). */
    private readonly recentMs: number,
  ) {}

  start(listener: WakeListener): void {
    if (this.listener !== undefined || this.closed) return
    this.listener = listener
    this.open()
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

  async close(): Promise<void> {
    this.closed = true
    if (this.retry !== undefined) clearTimeout(this.retry)
    this.retry = undefined
    const client = this.client
    this.client = undefined
    await client?.end().catch(() => {})
  }

  private open(): void {
    if (this.closed) return
    const client = new this.Client({ ...this.options, keepAlive: true })
    this.client = client
    let gone = false
    const lost = () => {
      if (gone) return
      gone = true
      if (this.client === client) this.client = undefined
      client.end().catch(() => {})
      if (this.closed) return
      this.retry = setTimeout(() => {
        this.retry = undefined
        this.open()
      }, this.reopenMs)
      this.retry.unref()
    }
    client.on('error', lost)
    client.on('end', lost)
    client.on('notification', (message) => {
      if (message.channel === this.channel && message.payload !== undefined)
        this.hear(message.payload)
    })
    client
      .connect()
      .then(() => client.query(`LISTEN "${this.channel}"`))
      .then(() => {
        if (gone) return
        this.listens++
        // Unref'd: the connection alone never keeps the process alive.
        ;(client as { connection?: { stream?: { unref?(): void } } }).connection?.stream?.unref?.()
        // Wake-ups sent before this connection listened were not heard.
        for (const { hash } of [...this.wanted.values()]) this.listener?.recheck(hash)
      }, lost)
  }

  private hear(payload: string): void {
    const lines = payload.split('\n')
    const digest = lines[0] ?? ''
    const known = this.wanted.get(digest)
    if (known === undefined) {
      this.remember(digest)
      return
    }
    if (this.listener === undefined) return
    const message = parse(lines[1] ?? '', lines.slice(2))
    if (message !== undefined) this.listener.hear(known.hash, message)
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
