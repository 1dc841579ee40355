import type { Pool, PoolClient } from 'pg'
import { bounded } from './io.js'
import type { PostgresEntry, PostgresPartition } from './partition.js'
import { type BusStatements, busStatements } from './statements.js'

/** What one read returned: the partitions found lost, and each partition's messages in seq order. */
export interface ReadReply {
  readonly lost: PostgresPartition[]
  readonly messages: Map<PostgresPartition, PostgresEntry[]>
}

/** What one membership tick learned. */
export interface TickReply {
  readonly live: number
  /** The held partitions whose lease was renewed (the others were found lost). */
  readonly renewed: ReadonlySet<number>
  /** Free partitions (when probing). */
  readonly free: readonly number[]
}

/** A dead letter as stored. */
export interface DeadLetterRow {
  readonly deadId: string
  readonly partition: number
  readonly pos: string
  readonly id: string
  readonly body: string
  readonly attempts: number
  readonly errorName: string
  readonly errorMessage: string
  readonly consumer: string
  readonly fence: number
}

type Row = Record<string, unknown>

/**
 * The bus's storage on Postgres: one statement per step, each bounded by
 * connectTimeoutMs twice: here (a step that does not answer fails with
 * `PostgresUnavailableError`), and on the server, where the statement's
 * function gives up any lock wait after as long (`lock_timeout`). Every channel payload names its aggregate:
 * `w <aggregate> <partition>` (a send), `m <aggregate> <consumer>` (the
 * membership changed).
 */
export class PostgresBusStore {
  readonly sql: BusStatements

  constructor(
    readonly pool: Pool,
    readonly schema: string,
    /** The one channel of the schema's bus. */
    readonly channel: string,
    readonly connectTimeoutMs: number,
    /** Runs the migrations once, before the first statement. */
    private readonly ready: () => Promise<void>,
  ) {
    this.sql = busStatements(schema)
  }

  private async query(operation: string, text: string, values: unknown[]): Promise<Row[]> {
    return bounded(operation, this.connectTimeoutMs, async () => {
      await this.ready()
      const result = await this.pool.query(text, [...values, this.connectTimeoutMs])
      return result.rows as Row[]
    })
  }

  wakePayload(aggregate: string, partition: number): string {
    return `w ${aggregate} ${partition}`
  }

  membershipPayload(aggregate: string, consumer: string): string {
    return `m ${aggregate} ${consumer}`
  }

  async send(
    aggregate: string,
    partition: number,
    id: string,
    body: string,
    client: PoolClient | undefined,
  ): Promise<string> {
    const wake = this.wakePayload(aggregate, partition)
    if (client === undefined) {
      const rows = await this.query('send', this.sql.send, [
        aggregate,
        partition,
        id,
        body,
        this.channel,
        wake,
      ])
      return String(rows[0]?.pos)
    }
    // Inside the caller's transaction: bounded too, but never retried or
    // reordered: the caller owns the transaction and sees the failure.
    return bounded('send', this.connectTimeoutMs, async () => {
      await this.ready()
      const result = await client.query(this.sql.sendInTransaction, [
        aggregate,
        partition,
        id,
        body,
        this.channel,
        wake,
        this.connectTimeoutMs,
      ])
      return String((result.rows[0] as Row | undefined)?.pos)
    })
  }

  async ensureLeases(aggregate: string, partitions: number): Promise<void> {
    await this.query('consume', this.sql.ensureLeases, [aggregate, partitions])
  }

  async tick(
    aggregate: string,
    me: string,
    want: boolean,
    leaseMs: number,
    held: readonly PostgresPartition[],
    probing: boolean,
    partitions: number,
  ): Promise<TickReply> {
    const rows = await this.query('tick', this.sql.tick, [
      aggregate,
      me,
      want,
      leaseMs,
      held.map((p) => p.index),
      held.map((p) => p.fence),
      probing,
      partitions,
      this.channel,
      this.membershipPayload(aggregate, me),
    ])
    const row = rows[0] as Row
    return {
      live: Number(row.live),
      renewed: new Set(row.renewed as number[]),
      free: (row.free as number[] | null) ?? [],
    }
  }

  /** Takes the free partitions among `chosen`; `late` hears grants that came after the bound. */
  async grant(
    aggregate: string,
    me: string,
    leaseMs: number,
    chosen: readonly number[],
    late: (granted: { index: number; fence: number }[]) => void,
  ): Promise<{ index: number; fence: number }[]> {
    const granted = (rows: Row[]) =>
      rows.map((row) => ({ index: Number(row.partition), fence: Number(row.fence) }))
    const rows = await bounded(
      'tick',
      this.connectTimeoutMs,
      async () => {
        await this.ready()
        return (
          await this.pool.query(this.sql.grant, [
            aggregate,
            me,
            leaseMs,
            chosen,
            this.connectTimeoutMs,
          ])
        ).rows as Row[]
      },
      (rows) => late(granted(rows)),
    )
    return granted(rows)
  }

  async read(
    aggregate: string,
    me: string,
    due: readonly PostgresPartition[],
    count: number,
  ): Promise<ReadReply> {
    const rows = await this.query('read', this.sql.read, [
      aggregate,
      me,
      due.map((p) => p.index),
      due.map((p) => p.fence),
      due.map((p) => p.after),
      count,
    ])
    const byIndex = new Map(due.map((p) => [p.index, p]))
    const lost: PostgresPartition[] = []
    const messages = new Map<PostgresPartition, PostgresEntry[]>()
    for (const row of rows) {
      const p = byIndex.get(Number(row.partition)) as PostgresPartition
      if (row.seq === null) {
        lost.push(p)
        continue
      }
      let list = messages.get(p)
      if (list === undefined) {
        list = []
        messages.set(p, list)
      }
      list.push({
        seq: Number(row.seq),
        entryId: String(row.pos),
        id: String(row.id),
        body: String(row.body),
        // deliveries: earlier deliveries known (a previous owner read it).
        attempt: Number(row.deliveries) + 1,
      })
    }
    return { lost, messages }
  }

  /** Deletes handled messages where this consumer still owns their partition. → the partitions acknowledged, as `<index>:<fence>` */
  async ack(
    aggregate: string,
    me: string,
    batch: ReadonlyMap<PostgresPartition, readonly number[]>,
  ): Promise<Set<string>> {
    const parts = [...batch.keys()]
    const ackedPartitions: number[] = []
    const ackedFences: number[] = []
    const ackedSeqs: number[] = []
    for (const [p, seqs] of batch) {
      for (const seq of seqs) {
        ackedPartitions.push(p.index)
        ackedFences.push(p.fence)
        ackedSeqs.push(seq)
      }
    }
    const rows = await this.query('ack', this.sql.ack, [
      aggregate,
      me,
      parts.map((p) => p.index),
      parts.map((p) => p.fence),
      ackedPartitions,
      ackedFences,
      ackedSeqs,
    ])
    return new Set(rows.map((row) => `${Number(row.partition)}:${Number(row.fence)}`))
  }

  /** The acknowledgement inside the handler's transaction. → whether this consumer still owns the partition */
  async ackInTransaction(
    tx: PoolClient,
    aggregate: string,
    me: string,
    p: PostgresPartition,
    seq: number,
  ): Promise<boolean> {
    const result = await bounded('ack', this.connectTimeoutMs, () =>
      tx.query(this.sql.ackOne, [aggregate, me, p.index, p.fence, seq, this.connectTimeoutMs]),
    )
    return result.rows.length === 1
  }

  /** Moves one message to the dead letters, where this consumer still owns its partition. → moved */
  async bury(
    aggregate: string,
    me: string,
    p: PostgresPartition,
    seq: number,
    attempts: number,
    error: { name: string; message: string },
  ): Promise<boolean> {
    const rows = await this.query('deadLetter', this.sql.bury, [
      aggregate,
      me,
      p.index,
      p.fence,
      seq,
      attempts,
      error.name,
      error.message,
    ])
    return rows.length === 1
  }

  /** Gives partitions back (and, `leaving`, leaves the members); tells the others. → how many were released */
  async release(
    aggregate: string,
    me: string,
    parts: readonly PostgresPartition[],
    leaving: boolean,
  ): Promise<number> {
    const rows = await this.query('release', this.sql.release, [
      aggregate,
      me,
      parts.map((p) => p.index),
      parts.map((p) => p.fence),
      leaving,
      this.channel,
      this.membershipPayload(aggregate, me),
    ])
    return ((rows[0] as Row).released as number[]).length
  }

  async stats(
    aggregate: string,
    parts: readonly number[],
  ): Promise<Map<number, { lag: number; oldestMs: number }>> {
    const rows = await this.query('stats', this.sql.stats, [aggregate, parts])
    return new Map(
      rows.map((row) => [
        Number(row.partition),
        { lag: Number(row.lag), oldestMs: Number(row.oldest) },
      ]),
    )
  }

  async deadLetters(aggregate: string, count: number): Promise<DeadLetterRow[]> {
    const rows = await this.query('deadLetters', this.sql.deadLetters, [aggregate, count])
    return rows.map((row) => ({
      deadId: String(row.dead_id),
      partition: Number(row.partition),
      pos: String(row.pos),
      id: String(row.id),
      body: String(row.body),
      attempts: Number(row.attempts),
      errorName: String(row.error_name),
      errorMessage: String(row.error_message),
      consumer: String(row.consumer),
      fence: Number(row.fence),
    }))
  }
}
