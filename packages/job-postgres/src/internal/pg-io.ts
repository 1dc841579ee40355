import { createHash } from 'node:crypto'
import {
  type AcquireReply,
  type AcquireRequest,
  type Answer,
  bounded,
  boundedTo,
  type CoordinationEngine,
  type HandOff,
  type LeaseVerdict,
  type ReleaseRequest,
  type WakeListener,
} from '@vega/job-distributed'
import type { PostgresPool } from '../pool.js'
import { channelOf, migrate } from '../schema.js'
import { io } from './io.js'
import { Listener } from './listener.js'

const NAME = '@vega/job-postgres'

const md5 = (text: string) => createHash('md5').update(text).digest('hex')

/**
 * The package's statements, prepared once per connection: a call of one
 * schema function each, but for a call's first ask and its release, which
 * first try the uncontended path in plain SQL, as a hand-written lease does
 * (the schema's functions cost more to enter than the statement does). A
 * fence row another step holds is skipped, never waited for: the key then
 * goes to the function (in the same statement), whose lock waits are
 * bounded by lock_timeout.
 */
const STATEMENTS = {
  firstAsk: `WITH free AS (
    SELECT f.key FROM %s.fences f WHERE f.key = $1 AND f.busy = 0 FOR UPDATE SKIP LOCKED
  ), granted AS (
    UPDATE %s.fences f SET fence = f.fence + 1, busy = 1
      WHERE f.key = $1 AND EXISTS (SELECT FROM free) RETURNING f.fence
  ), held AS (
    INSERT INTO %s.holders (key, holder, expires_at)
      SELECT $1, $2, clock_timestamp() + $5::int * interval '1 millisecond' FROM granted
  )
  SELECT 1 AS kind, fence, NULL::int AS pos, NULL::text[] AS ids, NULL::text AS payload FROM granted
  UNION ALL
  SELECT * FROM %s.acquire($1, $2, $3, $4, $5, $6, $7, $8) WHERE NOT EXISTS (SELECT FROM granted)`,
  acquire: 'SELECT * FROM %s.acquire($1, $2, $3, $4, $5, $6, $7, $8)',
  line: 'SELECT * FROM %s.acquire_line($1, $2, $3, $4, $5, $6)',
  renew: 'SELECT %s.renew($1, $2, $3, $4, $5) AS verdict',
  assert: 'SELECT %s.assert_lease($1, $2, $3) AS verdict',
  release: `WITH alone AS (
    SELECT f.key FROM %s.fences f WHERE f.key = $1 AND f.busy = 1 FOR UPDATE SKIP LOCKED
  ), gone AS (
    DELETE FROM %s.holders h
      WHERE h.key = $1 AND h.holder = $2 AND NOT h.followed AND EXISTS (SELECT FROM alone)
      RETURNING h.key
  ), freed AS (
    UPDATE %s.fences f SET busy = 0 WHERE f.key = $1 AND EXISTS (SELECT FROM gone) RETURNING f.key
  )
  SELECT true AS released, NULL::text AS head, NULL::bigint AS fence FROM freed
  UNION ALL
  SELECT * FROM %s.release($1, $2, $3, $4, $5, $6, $7) WHERE NOT EXISTS (SELECT FROM freed)`,
  leave: 'SELECT %s.leave($1, $2, $3, $4, $5) AS left',
  holderOf:
    'SELECT holder FROM %s.holders WHERE key = $1 AND expires_at > clock_timestamp() LIMIT 1',
  sweep: 'SELECT %s.sweep($1, $2) AS swept',
} as const

type StatementName = keyof typeof STATEMENTS

export interface PgSettings {
  readonly pool: PostgresPool
  readonly schema: string
  readonly leaseMs: number
  readonly connectTimeoutMs: number
  /** How often every expired row is swept (ms). */
  readonly sweepMs: number
}

/**
 * The Postgres engine of the coordination: each step is one round trip, a
 * call of one of the schema's functions as a named prepared statement (parsed
 * and planned once per connection). Every lock wait inside it is bounded by
 * `connectTimeoutMs` on the server (the function sets `lock_timeout`, local
 * to its own transaction: the app's statements on the same pool keep their
 * settings), and every step by `connectTimeoutMs` on this side too (a
 * connection the pool cannot give, a server that does not answer).
 */
export class PgIO implements CoordinationEngine {
  readonly name: string = NAME
  readonly storage: string = 'Postgres'
  readonly factory: string = 'createPostgresCoordination'
  readonly handle: string = 'coordination'
  readonly runIdName: string = 'instance id'
  readonly leaseMs: number
  readonly connectTimeoutMs: number
  readonly listener: Listener
  private readonly s: string
  /** Each statement's text and name (unique per schema: one connection may serve several). */
  private readonly prepared: Record<StatementName, { readonly name: string; readonly text: string }>
  /** The schema's instance id (the token's runId), known once the schema is ready. */
  private instance: string | undefined
  private ready: Promise<string> | undefined
  private sweeper: NodeJS.Timeout | undefined
  /** Per key with first asks of a line on the wire: the asks made since (see {@link inLine}). */
  private readonly lines = new Map<string, LineAsk[]>()

  constructor(private readonly settings: PgSettings) {
    this.leaseMs = settings.leaseMs
    this.connectTimeoutMs = settings.connectTimeoutMs
    this.s = `"${settings.schema}"`
    this.prepared = Object.fromEntries(
      Object.entries(STATEMENTS).map(([name, text]) => [
        name,
        { name: `vega_job:${settings.schema}:${name}`, text: text.replaceAll('%s', this.s) },
      ]),
    ) as PgIO['prepared']
    this.listener = new Listener(
      settings.pool,
      channelOf(settings.schema),
      md5,
      settings.connectTimeoutMs,
      settings.leaseMs,
    )
  }

  /** Migrates (once per engine) and learns the instance id. */
  private prepare(): Promise<string> {
    this.ready ??= migrate(this.settings.pool, { schema: this.settings.schema })
      .then(() => this.settings.pool.query(`SELECT id FROM ${this.s}.instance LIMIT 1`))
      .then((result) => {
        this.instance = String(result.rows[0]?.id)
        return this.instance
      })
    // A failed first attempt (Postgres down) is tried again by the next call.
    this.ready.catch(() => {
      this.ready = undefined
    })
    return this.ready
  }

  /** One statement of ours, once the schema is ready: `read` gets its first row. */
  private statement<T>(
    name: StatementName,
    values: unknown[],
    read: (row: Record<string, unknown>) => T,
  ): Promise<T> {
    return this.query(name, values, (rows) => read(rows[0] ?? NO_ROW))
  }

  /** One statement of ours, once the schema is ready: what `read` makes of its rows. */
  private query<T>(
    name: StatementName,
    values: unknown[],
    read: (rows: Record<string, unknown>[]) => T,
  ): Promise<T> {
    const { name: statementName, text } = this.prepared[name]
    const send = () =>
      (this.settings.pool as unknown as PreparedQuery)
        .query({ name: statementName, text, values })
        .then((result) => read(result.rows))
    if (this.instance !== undefined) return send()
    return this.prepare().then(send)
  }

  private send<T>(operation: string, step: () => Promise<T>, to: Answer<T>): void {
    if ((this.settings.pool as { ending?: boolean }).ending === true) {
      queueMicrotask(() =>
        to.failed(
          io.unavailable(
            'the pool was ended (pool.end() was called); create the coordination with an open pool.',
            operation,
          ),
        ),
      )
      return
    }
    boundedTo(operation, this.connectTimeoutMs, step, to, io.unavailable, this.storage)
  }

  private bounded<T>(operation: string, step: () => Promise<T>): Promise<T> {
    return new Promise<T>((answered, failed) => this.send(operation, step, { answered, failed }))
  }

  acquireTo(request: AcquireRequest, to: Answer<AcquireReply>): void {
    const { hash, id, mode, limit, follow, recheck } = request
    const values = [hash, id, mode, limit, this.leaseMs, follow, recheck, this.connectTimeoutMs]
    // A call that asked before (in a line, or following a dedupe leader) goes straight to the function.
    const statement = !recheck && follow === '-' ? 'firstAsk' : 'acquire'
    const step = () => this.statement(statement, values, (row) => this.parseAcquire(row))
    // A call's first place in a line: after the one this process asked for before it.
    if ((mode === 'queue' || mode === 'latest') && !recheck) this.inLine({ request, step, to })
    else this.send('acquire', step, to)
  }

  /**
   * A pool sends one process's statements on several connections, so two
   * calls asked in order could reach Postgres out of order. A line's first
   * asks of one key leave this process in order: while some are on the
   * wire, the ones made meanwhile wait, and go together once those are
   * answered, in one statement that takes their places one after the other
   * (a process's calls issued at once join the line in two round trips, not
   * one each, and stand together in it, so the key passes between them
   * without a NOTIFY). Other keys, and re-checks, never wait.
   */
  private inLine(ask: LineAsk): void {
    const { hash } = ask.request
    const waiting = this.lines.get(hash)
    if (waiting !== undefined) {
      waiting.push(ask)
      return
    }
    this.lines.set(hash, [])
    this.sendLine(hash, [ask])
  }

  /** Sends `asks` (one key's, in call order); once answered, the ones made meanwhile. */
  private sendLine(hash: string, asks: LineAsk[]): void {
    const next = () => {
      const waiting = this.lines.get(hash) ?? []
      if (waiting.length === 0) this.lines.delete(hash)
      else this.sendLine(hash, takeBatch(waiting))
    }
    const only = asks.length === 1 ? asks[0] : undefined
    if (only !== undefined) {
      this.send('acquire', only.step, {
        answered(reply) {
          next()
          only.to.answered(reply)
        },
        failed(error) {
          next()
          only.to.failed(error)
        },
        late: (reply) => only.to.late?.(reply),
      })
      return
    }
    const { mode, limit } = asks[0]!.request
    const ids = asks.map((ask) => ask.request.id)
    const values = [hash, ids, mode, limit, this.leaseMs, this.connectTimeoutMs]
    const step = () =>
      this.query('line', values, (rows) => {
        if (rows.length !== asks.length) {
          throw new Error(`acquire_line answered ${rows.length} rows for ${asks.length} asks`)
        }
        return rows.map((row) => this.parseAcquire(row))
      })
    this.send('acquire', step, {
      answered(replies) {
        next()
        for (const [i, ask] of asks.entries()) ask.to.answered(replies[i]!)
      },
      failed(error) {
        next()
        for (const ask of asks) ask.to.failed(error)
      },
      late(replies) {
        for (const [i, ask] of asks.entries()) ask.to.late?.(replies[i]!)
      },
    })
  }

  private parseAcquire(row: Record<string, unknown>): AcquireReply {
    const ids = row.ids as string[] | null
    switch (row.kind) {
      case 1:
        return {
          kind: 'granted',
          fence: Number(row.fence),
          runId: this.instance ?? '?',
          evicted: ids ?? NONE,
        }
      case 2:
        return { kind: 'result', payload: String(row.payload) }
      case 3:
        return SUPERSEDED
      default:
        return { kind: 'waiting', position: Number(row.pos ?? 0), others: ids ?? [] }
    }
  }

  renew(hash: string, id: string, runId: string): Promise<LeaseVerdict> {
    const values = [hash, id, this.leaseMs, runId, this.connectTimeoutMs]
    return this.bounded('renew', () =>
      this.statement('renew', values, (row) => row.verdict as LeaseVerdict),
    )
  }

  assert(hash: string, id: string, runId: string): Promise<LeaseVerdict> {
    return this.bounded('assertLease', () =>
      this.statement('assert', [hash, id, runId], (row) => row.verdict as LeaseVerdict),
    )
  }

  releaseTo(request: ReleaseRequest, to: Answer<boolean | HandOff>): void {
    const { hash, id, kind, payload, single } = request
    const values = [hash, id, kind, payload, this.leaseMs, single, this.connectTimeoutMs]
    const step = () => this.statement('release', values, (row) => this.parseRelease(row))
    this.send('release', step, to)
  }

  private parseRelease(row: Record<string, unknown>): boolean | HandOff {
    if (typeof row.head !== 'string') return row.released === true
    return { id: row.head, fence: Number(row.fence), server: this.instance ?? '' }
  }

  leave(hash: string, id: string, single: boolean): Promise<boolean> {
    const values = [hash, id, this.leaseMs, single, this.connectTimeoutMs]
    return this.bounded('leave', () => this.statement('leave', values, (row) => row.left === true))
  }

  holderOf(hash: string): Promise<string | null> {
    return this.bounded('holderOf', () =>
      this.statement('holderOf', [hash], (row) => (row.holder as string | undefined) ?? null),
    )
  }

  /** A hand-off's wake-up names no server: every grant of one schema carries its instance id. */
  handOffServer(): string | undefined {
    return this.instance
  }

  /** A pool sends one process's statements on several connections: order between them is not kept. */
  readonly ordered: boolean = false

  listen(listener: WakeListener): void {
    this.listener.start(listener)
    if (this.sweeper !== undefined) return
    // The periodic sweep: expired rows of keys nobody touches again.
    this.sweeper = setInterval(() => {
      bounded(
        'sweep',
        this.connectTimeoutMs,
        () => this.statement('sweep', [SWEEP_BATCH, this.connectTimeoutMs], (row) => row.swept),
        io.unavailable,
        this.storage,
      ).catch(() => {})
    }, this.settings.sweepMs)
    this.sweeper.unref()
  }

  want(hash: string): void {
    this.listener.want(hash)
  }

  unwant(hash: string): void {
    this.listener.unwant(hash)
  }

  async close(): Promise<void> {
    if (this.sweeper !== undefined) clearInterval(this.sweeper)
    this.sweeper = undefined
    await this.listener.close()
  }

  /** pg's Pool has no end event: an ended pool is seen at the next call (`pool.ending`). */
  onClientEnd(): void {}
}

/** A first ask of a line, waiting to leave this process after the ones before it. */
interface LineAsk {
  readonly request: AcquireRequest
  /** The ask on its own (the uncontended path first). */
  readonly step: () => Promise<AcquireReply>
  readonly to: Answer<AcquireReply>
}

/**
 * First asks per statement at most: the statement holds the key's row while
 * it takes their places, and must answer within connectTimeoutMs.
 */
const LINE_BATCH = 64

/** Takes from `waiting` the asks that go in one statement: the first ones, of one mode and limit. */
function takeBatch(waiting: LineAsk[]): LineAsk[] {
  const { mode, limit } = waiting[0]!.request
  let n = 1
  while (
    n < waiting.length &&
    n < LINE_BATCH &&
    waiting[n]!.request.mode === mode &&
    waiting[n]!.request.limit === limit
  ) {
    n++
  }
  return waiting.splice(0, n)
}

/** Rows per table the periodic sweep deletes at most, per pass. */
const SWEEP_BATCH = 1000

/** pg's query with a config object (a named statement and its values). */
interface PreparedQuery {
  query(config: { name: string; text: string; values: unknown[] }): Promise<{
    rows: Record<string, unknown>[]
  }>
}

const SUPERSEDED: AcquireReply = Object.freeze({ kind: 'superseded' })
/** What a reply without rows reads as (every field missing). */
const NO_ROW: Record<string, unknown> = Object.freeze({})
const NONE: readonly string[] = Object.freeze([])
