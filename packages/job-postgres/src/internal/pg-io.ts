import { createHash } from 'node:crypto'
import {
  type AcquireReply,
  type AcquireRequest,
  type Answer,
  bounded,
  boundedTo,
  type CoordinationEngine,
  type LeaseVerdict,
  type ReleaseKind,
  type WakeListener,
} from '@vega/job-distributed'
import { PostgresUnavailableError } from '../errors.js'
import type { PostgresPool } from '../pool.js'
import { channelOf, migrate } from '../schema.js'
import { Listener } from './listener.js'

const NAME = '@vega/job-postgres'

const unavailable = (message: string, operation: string, cause?: unknown) =>
  new PostgresUnavailableError(
    `${NAME} ${operation}: ${message}`,
    operation,
    cause === undefined ? undefined : { cause },
  )

/** A SQL string literal (E'…'): the key and ids are arbitrary text. */
function literal(text: string): string {
  return `E'${text.replaceAll('\\', '\\\\').replaceAll("'", "''")}'`
}

const md5 = (text: string) => createHash('md5').update(text).digest('hex')

// biome-ignore lint/suspicious/noExplicitAny: a pg result or an array of them (a multi-statement query)
function lastRow(result: any): Record<string, unknown> {
  const last = Array.isArray(result) ? result[result.length - 1] : result
  return last?.rows?.[0] ?? {}
}

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
 * call of one of the schema's functions, sent with its own
 * `statement_timeout` (set_config, local to the statement's implicit
 * transaction: the app's statements on the same pool keep theirs); each is
 * bounded by `connectTimeoutMs` on this side too (a connection the pool
 * cannot give, a server that does not answer).
 */
export class PgIO implements CoordinationEngine {
  readonly name: string = NAME
  readonly storage: string = 'Postgres'
  readonly factory: string = 'createPostgresCoordination'
  readonly leaseMs: number
  readonly connectTimeoutMs: number
  readonly listener: Listener
  private readonly s: string
  private readonly leaseArg: string
  private readonly timeoutPrefix: string
  /** The schema's instance id (the token's runId), known once the schema is ready. */
  private instance: string | undefined
  private ready: Promise<string> | undefined
  private sweeper: NodeJS.Timeout | undefined
  /** Per key, the first ask of a line still on the wire (see {@link inLine}). */
  private readonly lines = new Map<string, Promise<void>>()

  constructor(private readonly settings: PgSettings) {
    this.leaseMs = settings.leaseMs
    this.connectTimeoutMs = settings.connectTimeoutMs
    this.s = `"${settings.schema}"`
    this.leaseArg = String(settings.leaseMs)
    this.timeoutPrefix = `SELECT set_config('statement_timeout', '${settings.connectTimeoutMs}', true);`
    const pool = settings.pool as unknown as {
      Client?: new (options: object) => never
      options?: object
    }
    this.listener = new Listener(
      pool.Client as never,
      pool.options ?? {},
      channelOf(settings.schema),
      md5,
      Math.min(1000, Math.max(10, Math.floor(settings.leaseMs / 10))),
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

  /** One statement of ours: the schema ready, the statement_timeout set, the last statement's row. */
  private statement(sql: string): Promise<Record<string, unknown>> {
    const send = () => this.settings.pool.query(`${this.timeoutPrefix}${sql}`).then(lastRow)
    if (this.instance !== undefined) return send()
    return this.prepare().then(send)
  }

  private send<T>(operation: string, step: () => Promise<T>, to: Answer<T>): void {
    if ((this.settings.pool as { ending?: boolean }).ending === true) {
      queueMicrotask(() =>
        to.failed(
          unavailable(
            'the pool was ended (pool.end() was called); create the coordination with an open pool.',
            operation,
          ),
        ),
      )
      return
    }
    boundedTo(operation, this.connectTimeoutMs, step, to, unavailable, this.storage)
  }

  private bounded<T>(operation: string, step: () => Promise<T>): Promise<T> {
    return new Promise<T>((answered, failed) => this.send(operation, step, { answered, failed }))
  }

  acquireTo(request: AcquireRequest, to: Answer<AcquireReply>): void {
    const { hash, id, mode, limit, follow, recheck } = request
    const sql = `SELECT * FROM ${this.s}.acquire(${literal(hash)}, ${literal(id)}, '${mode}', ${limit}, ${this.leaseArg}, ${literal(follow)}, ${recheck});`
    const step = () => this.statement(sql).then((row) => this.parseAcquire(row))
    // A call's first place in a line: after the one this process asked for before it.
    if ((mode === 'queue' || mode === 'latest') && !recheck) this.inLine(hash, step, to)
    else this.send('acquire', step, to)
  }

  /**
   * A pool sends one process's statements on several connections, so two
   * calls asked in order could reach Postgres out of order. A line's first
   * asks of one key leave this process one at a time, each once the one
   * before it was answered: the line holds them in the order they were made
   * here, as the local serialize does. Other keys, and re-checks, never wait.
   */
  private inLine(hash: string, step: () => Promise<AcquireReply>, to: Answer<AcquireReply>): void {
    const before = this.lines.get(hash)
    let done!: () => void
    const mine = new Promise<void>((resolve) => {
      done = resolve
    })
    this.lines.set(hash, mine)
    const next = () => {
      done()
      if (this.lines.get(hash) === mine) this.lines.delete(hash)
    }
    const answer: Answer<AcquireReply> = {
      answered(reply) {
        next()
        to.answered(reply)
      },
      failed(error) {
        next()
        to.failed(error)
      },
      late: (reply) => to.late?.(reply),
    }
    if (before === undefined) this.send('acquire', step, answer)
    else void before.then(() => this.send('acquire', step, answer))
  }

  private parseAcquire(row: Record<string, unknown>): AcquireReply {
    const ids = (row.ids as string[] | null) ?? []
    switch (row.kind) {
      case 1:
        return {
          kind: 'granted',
          fence: Number(row.fence),
          runId: this.instance ?? '?',
          evicted: ids,
        }
      case 2:
        return { kind: 'result', payload: String(row.payload) }
      case 3:
        return SUPERSEDED
      default:
        return { kind: 'waiting', position: Number(row.pos ?? 0), others: ids }
    }
  }

  renew(hash: string, id: string, runId: string): Promise<LeaseVerdict> {
    const sql = `SELECT ${this.s}.renew(${literal(hash)}, ${literal(id)}, ${this.leaseArg}, ${literal(runId)}) AS verdict;`
    return this.bounded('renew', () =>
      this.statement(sql).then((row) => row.verdict as LeaseVerdict),
    )
  }

  assert(hash: string, id: string, runId: string): Promise<LeaseVerdict> {
    const sql = `SELECT ${this.s}.assert_lease(${literal(hash)}, ${literal(id)}, ${literal(runId)}) AS verdict;`
    return this.bounded('assertLease', () =>
      this.statement(sql).then((row) => row.verdict as LeaseVerdict),
    )
  }

  releaseTo(
    hash: string,
    id: string,
    kind: ReleaseKind,
    payload: string,
    _single: boolean,
    to: Answer<boolean>,
  ): void {
    const sql = `SELECT ${this.s}.release(${literal(hash)}, ${literal(id)}, '${kind}', ${literal(payload)}, ${this.leaseArg}) AS released;`
    this.send('release', () => this.statement(sql).then((row) => row.released === true), to)
  }

  leave(hash: string, id: string): Promise<boolean> {
    const sql = `SELECT ${this.s}.leave(${literal(hash)}, ${literal(id)}) AS left;`
    return this.bounded('leave', () => this.statement(sql).then((row) => row.left === true))
  }

  holderOf(hash: string): Promise<string | null> {
    const sql = `SELECT holder FROM ${this.s}.holders WHERE key = ${literal(hash)} AND expires_at > clock_timestamp() LIMIT 1;`
    return this.bounded('holderOf', () =>
      this.statement(sql).then((row) => (row.holder as string | undefined) ?? null),
    )
  }

  /** Postgres never hands a key over in a message: a woken waiter asks. */
  handOffServer(): undefined {
    return undefined
  }

  listen(listener: WakeListener): void {
    this.listener.start(listener)
    if (this.sweeper !== undefined) return
    // The periodic sweep: expired rows of keys nobody touches again.
    this.sweeper = setInterval(() => {
      bounded(
        'sweep',
        this.connectTimeoutMs,
        () => this.statement(`SELECT ${this.s}.sweep(1000);`),
        unavailable,
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

const SUPERSEDED: AcquireReply = Object.freeze({ kind: 'superseded' })
