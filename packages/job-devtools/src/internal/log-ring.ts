import type { Envelope } from '@vega/job-devtools-protocol'

/**
 * The event log of one session: the newest `capacity` envelopes, oldest
 * dropped first and counted in `trimmed`. The log rows and the NDJSON export
 * both read it.
 */
export class LogRing {
  private readonly slots: Array<Envelope | undefined>
  private start = 0
  size = 0
  trimmed = 0

  constructor(readonly capacity: number) {
    this.slots = new Array(capacity)
  }

  push(envelope: Envelope): void {
    if (this.size < this.capacity) {
      this.slots[(this.start + this.size) % this.capacity] = envelope
      this.size += 1
      return
    }
    this.slots[this.start] = envelope
    this.start = (this.start + 1) % this.capacity
    this.trimmed += 1
  }

  /** The `index`-th retained envelope, oldest first. */
  at(index: number): Envelope | undefined {
    if (index < 0 || index >= this.size) return undefined
    return this.slots[(this.start + index) % this.capacity]
  }

  /** Every retained envelope, oldest first. */
  toArray(): Envelope[] {
    const out: Envelope[] = []
    for (let index = 0; index < this.size; index += 1) out.push(this.at(index) as Envelope)
    return out
  }
}

/** The task (or coordination intent) an event is about. */
export function taskIdOf(envelope: Envelope): number | undefined {
  const e = envelope.e as unknown as { readonly [field: string]: unknown }
  if (typeof e.taskId === 'number') return e.taskId
  if (typeof e.intentId === 'number') return e.intentId
  return undefined
}
