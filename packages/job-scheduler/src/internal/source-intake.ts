/** What a {@link SourceIntake} asks of its dispatcher. */
export interface IntakeHost<E> {
  /** Whether the dispatcher takes another exchange now (running, below its in-flight limit). */
  accepting(): boolean
  /** Whether intake is still open (a value that arrives after it closed is not admitted). */
  running(): boolean
  admit(exchange: E): void
  /** The source ended: drain and stop. */
  ended(): void
  /** The source threw. */
  failed(error: unknown): void
}

/**
 * A dispatcher's `source`: pulled one value at a time while the dispatcher
 * accepts more, paused at its in-flight limit and resumed by `pull()` when
 * an exchange finishes; closed (`return()`) when intake closes.
 */
export class SourceIntake<E> {
  private readonly source: AsyncIterable<E>
  private readonly host: IntakeHost<E>
  private iterator: AsyncIterator<E> | undefined = undefined
  private pulling = false
  private closed = false

  constructor(source: AsyncIterable<E>, host: IntakeHost<E>) {
    this.source = source
    this.host = host
  }

  /** Subscribes (at `prepare()`), without pulling yet. */
  open(): void {
    this.iterator = this.source[Symbol.asyncIterator]()
  }

  /** Pulls while the dispatcher accepts; a no-op while a pull is under way. */
  pull(): void {
    const iterator = this.iterator
    if (iterator === undefined || this.pulling || this.closed || !this.host.accepting()) return
    this.pulling = true
    void this.loop(iterator)
  }

  private async loop(iterator: AsyncIterator<E>): Promise<void> {
    try {
      while (this.host.accepting()) {
        const next = await iterator.next()
        // A value that arrives after intake closed is not admitted; the source
        // was told to stop (return()) and keeps it.
        if (!this.host.running()) return
        if (next.done === true) {
          this.closed = true
          this.host.ended()
          return
        }
        this.host.admit(next.value)
      }
    } catch (error) {
      this.host.failed(error)
    } finally {
      this.pulling = false
    }
  }

  /** Tells the source to stop, once. */
  close(): void {
    const iterator = this.iterator
    if (this.closed || iterator === undefined) return
    this.closed = true
    // Detached, as in Wow: a slow source cleanup never delays the stop.
    try {
      const returned = iterator.return?.()
      if (returned !== undefined) Promise.resolve(returned).catch(() => {})
    } catch {
      // The source is being abandoned; its cleanup failure changes nothing here.
    }
  }
}
