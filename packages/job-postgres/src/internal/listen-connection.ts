import { bounded, pause } from '@vega/job-distributed'
import { PostgresUnavailableError } from '../errors.js'

/**
 * One family of wake-ups on a pool's LISTEN connection: a coordination's
 * keys, or a bus's consumers. Several users may share a channel.
 */
export interface ListenUser {
  /** The NOTIFY channel it listens on. */
  readonly channel: string
  /** How long opening the connection and each LISTEN may take (ms); the connection allows the longest of its users'. */
  readonly connectTimeoutMs: number
  /** A notification on its channel. → whether it woke anything here. */
  heard(payload: string): boolean
  /** Its channel is listened on a new connection: whatever was sent before was not heard. */
  listening(): void
  /** Opening or listening failed; the connection tries again by itself. */
  failed(error: unknown): void
}

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

/** What of a `pg.Pool` the connection is made from. */
interface PoolInternals {
  readonly Client: new (options: object) => ListenClient
  readonly options?: object
}

/** One opened connection, and what was LISTENed and told on it. */
interface Round {
  readonly client: ListenClient
  readonly listened: Set<string>
  readonly told: Set<ListenUser>
}

/** The first pause before opening again; it doubles while opening keeps failing, up to {@link LAST_RETRY_MS}. */
const FIRST_RETRY_MS = 50
const LAST_RETRY_MS = 1000

const unavailable = (message: string, operation: string, cause?: unknown): Error =>
  new PostgresUnavailableError(
    `@vega/job-postgres ${operation}: ${message}`,
    operation,
    cause === undefined ? undefined : { cause },
  )

const quoted = (channel: string): string => `"${channel.replaceAll('"', '""')}"`

/**
 * A pool's one LISTEN connection, whatever uses it in the process: every
 * coordination and every bus made with that pool listen on it, each on its
 * own channel. It is a `pg.Client` of the pool's own class and options, so
 * it never takes one of the application's connections; it opens with the
 * first user and closes with the last. A connection that ends
 * (`pg_terminate_backend`, a restart, a network cut) is opened again after
 * a pause (50 ms, doubling to 1 s while opening fails) and every channel is
 * listened again; then each user hears `listening()` and re-checks what it
 * waits for, since a wake-up sent meanwhile was not heard. NOTIFY only
 * wakes: every user keeps its own floor.
 */
export class ListenConnection {
  private readonly users = new Set<ListenUser>()
  private running: AbortController | undefined
  /** Resolves once the connection the last user left is closed. */
  private closed: Promise<void> = Promise.resolve()
  private round: Round | undefined
  /** LISTEN / UNLISTEN one after another on the connection. */
  private syncing: Promise<void> = Promise.resolve()
  /** How many times a connection was opened and listened: the tests read it. */
  opens: number = 0
  /** Per channel, the notifications that woke something here: the tests read it. */
  readonly delivered: Map<string, number> = new Map()

  constructor(private readonly pool: PoolInternals) {}

  add(user: ListenUser): void {
    if (this.users.has(user)) return
    this.users.add(user)
    if (this.running === undefined) {
      this.running = new AbortController()
      let done!: () => void
      this.closed = new Promise((resolve) => {
        done = resolve
      })
      // Only a Client that cannot even be made ends it: the users' floors go on.
      void this.keepListening(this.running.signal)
        .catch((error: unknown) => {
          for (const each of [...this.users]) each.failed(error)
        })
        .finally(done)
    } else if (this.round !== undefined) {
      void this.sync(this.round).catch(() => {})
    }
  }

  /** → resolves once the connection is closed, when `user` was the last. */
  remove(user: ListenUser): Promise<void> {
    if (!this.users.delete(user)) return Promise.resolve()
    if (this.users.size === 0) {
      this.running?.abort()
      this.running = undefined
      return this.closed
    }
    if (this.round !== undefined) void this.sync(this.round).catch(() => {})
    return Promise.resolve()
  }

  private connectTimeoutMs(): number {
    let ms = 0
    for (const user of this.users) ms = Math.max(ms, user.connectTimeoutMs)
    return ms
  }

  private async keepListening(signal: AbortSignal): Promise<void> {
    let backoff = FIRST_RETRY_MS
    while (!signal.aborted) {
      const client = new this.pool.Client({ ...this.pool.options, keepAlive: true })
      const round: Round = { client, listened: new Set(), told: new Set() }
      // Every way it ends (an error, the server gone, the last user left) ends this round.
      let end!: () => void
      const ended = new Promise<void>((resolve) => {
        end = resolve
      })
      client.on('error', end)
      client.on('end', end)
      signal.addEventListener('abort', end, { once: true })
      client.on('notification', (message) => {
        if (this.round === round && message.payload !== undefined) {
          this.heard(message.channel, message.payload)
        }
      })
      try {
        await bounded(
          'listen',
          this.connectTimeoutMs(),
          () => client.connect(),
          unavailable,
          'Postgres',
        )
        // Unref'd: the connection alone never keeps the process alive.
        ;(client as { connection?: { stream?: { unref?(): void } } }).connection?.stream?.unref?.()
        this.round = round
        await this.sync(round)
        this.opens++
        backoff = FIRST_RETRY_MS
        await ended
      } catch (error) {
        if (!signal.aborted) for (const user of [...this.users]) user.failed(error)
      }
      signal.removeEventListener('abort', end)
      if (this.round === round) this.round = undefined
      const ending = client.end().catch(() => {})
      // The last user left: closed once the server saw it go (a silent network is not waited for).
      if (signal.aborted) return Promise.race([ending, pause(LAST_RETRY_MS)])
      await pause(backoff, signal)
      backoff = Math.min(LAST_RETRY_MS, backoff * 2)
    }
  }

  /**
   * Brings the connection's LISTENs in line with its users' channels, then
   * tells each user whose channel is listened and who was not told yet on
   * this connection. A LISTEN that fails or does not answer in time ends
   * the connection (it is opened again), so a deaf connection never stays.
   */
  private sync(round: Round): Promise<void> {
    const step = async () => {
      if (this.round !== round) return
      const wanted = new Set([...this.users].map((user) => user.channel))
      try {
        for (const channel of wanted) {
          if (round.listened.has(channel)) continue
          await this.on(round, `LISTEN ${quoted(channel)}`)
          round.listened.add(channel)
        }
        for (const channel of [...round.listened]) {
          if (wanted.has(channel)) continue
          round.listened.delete(channel)
          await this.on(round, `UNLISTEN ${quoted(channel)}`)
        }
      } catch (error) {
        void round.client.end().catch(() => {})
        throw error
      }
      for (const user of [...this.users]) {
        if (round.told.has(user) || !round.listened.has(user.channel)) continue
        round.told.add(user)
        user.listening()
      }
    }
    this.syncing = this.syncing.then(step, step)
    return this.syncing
  }

  private on(round: Round, text: string): Promise<unknown> {
    return bounded(
      'listen',
      this.connectTimeoutMs(),
      () => round.client.query(text),
      unavailable,
      'Postgres',
    )
  }

  private heard(channel: string, payload: string): void {
    let woke = false
    for (const user of [...this.users]) {
      if (user.channel === channel && user.heard(payload)) woke = true
    }
    if (woke) this.delivered.set(channel, (this.delivered.get(channel) ?? 0) + 1)
  }
}

/** Each pool's one LISTEN connection. */
const connections = new WeakMap<object, ListenConnection>()

/**
 * The LISTEN connection of `pool`: the same for every coordination and bus
 * made with that pool object. Two pools (even on one database) have one
 * each.
 */
export function listenConnectionOf(pool: object): ListenConnection {
  let found = connections.get(pool)
  if (found === undefined) {
    found = new ListenConnection(pool as PoolInternals)
    connections.set(pool, found)
  }
  return found
}
