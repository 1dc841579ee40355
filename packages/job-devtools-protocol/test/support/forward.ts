import type { Envelope } from '../../src/index.js'

type Loose = { readonly [field: string]: unknown }

/**
 * Rewrites a v1 recording as a newer v1.x producer would send it: unknown
 * event types interleaved (with their own seqs), unknown fields on the
 * envelope, `src`, events and snapshot tasks, and unknown enum values
 * (capabilities, a task state and a wire tag inside unknown data).
 */
export function asNewerProducer(envelopes: readonly Envelope[]): Envelope[] {
  const originals = envelopes.map((envelope) => envelope.seq)
  const shiftBefore = new Map<number, number>()
  let inserted = 0
  for (const envelope of envelopes) {
    shiftBefore.set(envelope.seq, inserted)
    inserted += extras(envelope).length
  }
  // A seq that was lost (inside a gap) shifts like the next envelope that exists.
  const map = (seq: number): number => {
    const next = originals.find((original) => original >= seq)
    return seq + (next === undefined ? inserted : (shiftBefore.get(next) ?? 0))
  }

  const out: Envelope[] = []
  for (const envelope of envelopes) {
    const seq = map(envelope.seq)
    out.push(decorate(envelope, seq, rewriteEvent(envelope.e as unknown as Loose, map)))
    extras(envelope).forEach((e, index) => {
      out.push(decorate(envelope, seq + index + 1, e))
    })
  }
  return out
}

function extras(envelope: Envelope): Loose[] {
  const e = envelope.e as unknown as Loose
  if (e.type === 'session:hello') {
    return [
      {
        type: 'runtime:metrics',
        heapUsed: 1234,
        histogram: { __type: 'Histogram', buckets: [1, 2] },
      },
    ]
  }
  if (e.type === 'task:transition') {
    return [{ type: 'task:progress', taskId: e.taskId, ratio: 0.5, phase: 'parked:rate-limit' }]
  }
  return []
}

function rewriteEvent(e: Loose, map: (seq: number) => number): Loose {
  const future = { ...e, x_future: { __type: 'Temporal', value: 'P1D' } }
  switch (e.type) {
    case 'session:hello':
      return {
        ...future,
        minor: 3,
        capabilities: [...(e.capabilities as string[]), 'compression:zstd'],
      }
    case 'session:snapshot':
      return {
        ...future,
        upToSeq: map(e.upToSeq as number),
        tasks: (e.tasks as Loose[]).map((task) => ({ ...task, priority: 2, owner: 'worker-1' })),
      }
    case 'session:gap':
      return { ...future, fromSeq: map(e.fromSeq as number), toSeq: map(e.toSeq as number) }
    default:
      return future
  }
}

function decorate(envelope: Envelope, seq: number, e: Loose): Envelope {
  return {
    ...envelope,
    seq,
    src: { ...envelope.src, host: 'edge-1' },
    trace: { span: `span-${seq}` },
    e,
  } as unknown as Envelope
}
