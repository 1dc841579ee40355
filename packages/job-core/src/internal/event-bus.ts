import type { Clock } from '../types/backend.js'
import type {
  CustomEventDraft,
  EventBus,
  RuntimeEvent,
  RuntimeEventDraft,
  RuntimeListener,
} from '../types/events.js'
import { stampNow } from './shared-reading.js'

/**
 * The bus behind `subscribe` and `getEventBus`. Listeners live in a
 * copy-on-write array: subscribing or unsubscribing during delivery never
 * skips or repeats a listener for the event being delivered.
 */
export class RuntimeEventBus implements EventBus {
  private listeners: readonly RuntimeListener[] = []
  private seq = 0
  private readonly clock: Clock

  constructor(clock: Clock) {
    this.clock = clock
  }

  get active(): boolean {
    return this.listeners.length > 0
  }

  get listenerCount(): number {
    return this.listeners.length
  }

  get lastSeq(): number {
    return this.seq
  }

  /** The kernel's own emit; what users and plugins emit is checked by {@link EventBusView} first. */
  emit(draft: RuntimeEventDraft | CustomEventDraft): void {
    if (this.listeners.length === 0) return
    this.deliver({ ...draft, seq: ++this.seq, at: stampNow(this.clock) } as RuntimeEvent)
  }

  /** Stamps a copy the caller made and no one else holds (see {@link EventBusView.emit}) and delivers it. */
  deliverCopy(event: object): void {
    const stamped = event as { seq: number; at: number }
    stamped.seq = ++this.seq
    stamped.at = stampNow(this.clock)
    this.deliver(event as RuntimeEvent)
  }

  /** The next `seq`, for the kernel's own events, which it builds whole (one object, fixed shape). */
  nextSeq(): number {
    return ++this.seq
  }

  /**
   * Delivers an event that already carries its `seq` (from {@link nextSeq})
   * and `at`: the one place every event passes. Frozen here when more than
   * one listener gets it, so no listener can change what the next one sees;
   * a sole listener gets it as built, since nobody else ever sees it (the
   * listener list is copy-on-write: one subscribed during delivery does not
   * get this event), and a freeze per event costs the one-listener path
   * (see bench/README.md, Core 3).
   */
  deliver(event: RuntimeEvent): void {
    const listeners = this.listeners
    if (listeners.length > 1) Object.freeze(event)
    for (const listener of listeners) {
      try {
        listener(event)
      } catch (error) {
        this.reportListenerError(
          error,
          event,
          this.listeners.some((other) => other !== listener),
        )
      }
    }
  }

  subscribe(listener: RuntimeListener): () => void {
    if (typeof listener !== 'function') {
      throw new TypeError(
        `subscribe(runtime, listener): listener must be a function, got ${typeof listener}.`,
      )
    }
    this.listeners = [...this.listeners, listener]
    let subscribed = true
    return () => {
      if (!subscribed) return
      subscribed = false
      this.listeners = this.listeners.filter((l) => l !== listener)
    }
  }

  /**
   * Reports that a listener (of the bus, or a task's watcher) threw on
   * `event`: as `runtime:listener-error` when `othersListen` (some other
   * bus listener hears it), else to the console.
   */
  reportListenerError(error: unknown, event: RuntimeEvent, othersListen: boolean): void {
    // A listener that fails on its own error report would loop forever; the
    // console is the last resort.
    if (event.type === 'runtime:listener-error') {
      console.error(
        '[@vega/job-core] a listener threw while handling runtime:listener-error',
        error,
      )
      return
    }
    if (!othersListen) {
      console.error(`[@vega/job-core] a listener threw on ${event.type} (seq ${event.seq})`, error)
      return
    }
    this.emit({ type: 'runtime:listener-error', error, eventType: event.type, eventSeq: event.seq })
  }
}

/** The event types only the kernel emits: its own facts, which every listener trusts. */
const KERNEL_NAMESPACES = ['task:', 'runtime:'] as const

/**
 * The bus as `getEventBus(runtime)` and `host.events` hand it out: `active`,
 * `emit` and `subscribe`, and nothing of the kernel's delivery machinery.
 * `emit` refuses the kernel's own event types, so a `task:transition` a
 * listener sees is one the kernel made.
 */
export class EventBusView implements EventBus {
  readonly #bus: RuntimeEventBus

  constructor(bus: RuntimeEventBus) {
    this.#bus = bus
    Object.freeze(this)
  }

  get active(): boolean {
    return this.#bus.active
  }

  emit(draft: RuntimeEventDraft | CustomEventDraft): void {
    if (draft === null || typeof draft !== 'object') {
      throw new TypeError(
        `emit(event): an event is an object with a string \`type\`, e.g. { type: "app:ready" }, got ${draft === null ? 'null' : typeof draft}.`,
      )
    }
    // Read once: what is checked is what is delivered (a getter cannot
    // answer one `type` to the check and another to listeners). Without
    // listeners, only `type` is read and nothing is built.
    const bus = this.#bus
    const event = bus.active ? { ...draft } : undefined
    const type: unknown = event === undefined ? draft.type : event.type
    if (typeof type !== 'string' || type === '') {
      throw new TypeError(
        'emit(event): an event needs a non-empty string `type`, e.g. { type: "app:ready" }.',
      )
    }
    const reserved = KERNEL_NAMESPACES.find((namespace) => type.startsWith(namespace))
    if (reserved !== undefined) {
      throw new TypeError(
        `emit(event): '${type}' is one of the kernel's own event types (${reserved}*), which only the kernel emits; emit your own under a namespace of yours, e.g. 'app:${type.slice(reserved.length)}'.`,
      )
    }
    if (event !== undefined) bus.deliverCopy(event)
  }

  subscribe(listener: RuntimeListener): () => void {
    return this.#bus.subscribe(listener)
  }
}
Object.freeze(EventBusView.prototype)
