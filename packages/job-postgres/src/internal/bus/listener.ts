import { pause } from '@vega/job-distributed'
import type { Client, Notification, Pool } from 'pg'
import { bounded } from './io.js'

/** What one consumer hears on the bus's channel. */
export interface BusHearing {
  readonly aggregate: string
  readonly consumerId: string
  /** A send woke partition `index`. */
  woke(index: number): void
  /** Someone else joined, left or gave partitions back. */
  membershipChanged(): void
  /** The LISTEN connection was (re)opened: anything sent meanwhile was not heard. */
  listening(): void
}

type ClientClass = new (options: object) => Client

/**
 * The bus's one LISTEN connection, shared by every consumer of the bus in
 * this process, opened with the first and closed with the last: a
 * `pg.Client` of the pool's own class and options, so it never takes a
 * connection from the application's pool. NOTIFY only wakes; the tables
 * are the truth, and every consumer reads all its partitions at least every
 * blockMs, so a connection that dies (a restart, `pg_terminate_backend`)
 * costs at most that: it is opened again, with a back-off up to one second,
 * and every consumer reads all its partitions once it listens again.
 */
export class BusListener {
  private readonly hearings = new Set<BusHearing>()
  private running: AbortController | undefined

  constructor(
    private readonly pool: Pool,
    private readonly channel: string,
    private readonly connectTimeoutMs: number,
    private readonly ready: () => Promise<void>,
    private readonly report: (error: unknown) => void,
  ) {}

  add(hearing: BusHearing): void {
    this.hearings.add(hearing)
    if (this.running === undefined) {
      this.running = new AbortController()
      void this.keepListening(this.running.signal)
    }
  }

  remove(hearing: BusHearing): void {
    this.hearings.delete(hearing)
    if (this.hearings.size > 0) return
    this.running?.abort()
    this.running = undefined
  }

  private async keepListening(signal: AbortSignal): Promise<void> {
    let backoff = 50
    const Client = (this.pool as unknown as { Client: ClientClass }).Client
    const options = (this.pool as unknown as { options: object }).options
    while (!signal.aborted) {
      const client = new Client({ ...options, keepAlive: true })
      // Every way it ends (an error, the server gone, the last consumer stopped) ends this round.
      const ended = new Promise<void>((resolve) => {
        client.on('error', () => resolve())
        client.on('end', () => resolve())
        signal.addEventListener('abort', () => resolve(), { once: true })
      })
      client.on('notification', this.heard)
      try {
        await this.ready()
        await bounded('listen', this.connectTimeoutMs, async () => {
          await client.connect()
          await client.query(`LISTEN "${this.channel.replaceAll('"', '""')}"`)
        })
        backoff = 50
        if (!signal.aborted) for (const hearing of this.hearings) hearing.listening()
        await ended
      } catch (error) {
        if (!signal.aborted) this.report(error)
      }
      client.end().catch(() => {})
      if (signal.aborted) return
      await pause(backoff, signal)
      backoff = Math.min(1000, backoff * 2)
    }
  }

  private readonly heard = (notification: Notification): void => {
    const payload = notification.payload ?? ''
    const [kind, aggregate, rest] = payload.split(' ')
    for (const hearing of this.hearings) {
      if (hearing.aggregate !== aggregate) continue
      if (kind === 'w') hearing.woke(Number(rest))
      else if (kind === 'm' && rest !== hearing.consumerId) hearing.membershipChanged()
    }
  }
}
