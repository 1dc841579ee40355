import { type ListenConnection, type ListenUser, listenConnectionOf } from '../listen-connection.js'

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

/**
 * The bus's wake-ups for every consumer of the bus in this process, on its
 * pool's one LISTEN connection (shared with every coordination and bus made
 * with that pool): it listens with the first consumer and stops with the
 * last. NOTIFY only wakes; the tables are the truth, and every consumer
 * reads all its partitions at least every blockMs, so a connection that
 * dies (a restart, `pg_terminate_backend`) costs at most that: once it
 * listens again, every consumer reads all its partitions.
 */
export class BusListener implements ListenUser {
  private readonly hearings = new Set<BusHearing>()
  private readonly connection: ListenConnection

  constructor(
    pool: object,
    readonly channel: string,
    readonly connectTimeoutMs: number,
    private readonly report: (error: unknown) => void,
  ) {
    this.connection = listenConnectionOf(pool)
  }

  add(hearing: BusHearing): void {
    this.hearings.add(hearing)
    if (this.hearings.size === 1) this.connection.add(this)
  }

  remove(hearing: BusHearing): void {
    if (!this.hearings.delete(hearing) || this.hearings.size > 0) return
    void this.connection.remove(this)
  }

  listening(): void {
    for (const hearing of [...this.hearings]) hearing.listening()
  }

  failed(error: unknown): void {
    this.report(error)
  }

  /** `w <aggregate> <partition>` (a send), `m <aggregate> <consumer>` (the membership changed). */
  heard(payload: string): boolean {
    const [kind, aggregate, rest] = payload.split(' ')
    let woke = false
    for (const hearing of [...this.hearings]) {
      if (hearing.aggregate !== aggregate) continue
      if (kind === 'w') hearing.woke(Number(rest))
      else if (kind === 'm' && rest !== hearing.consumerId) hearing.membershipChanged()
      else continue
      woke = true
    }
    return woke
  }
}
