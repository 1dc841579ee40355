import type { Clock, Runtime, RuntimeInspection, RuntimeInspector } from '@vega/job-core'
import { isControlMessage } from './control-message.js'
import type { Envelope, EnvelopeSource } from './envelope.js'
import { encodeEvent, type RawEvent } from './internal/encode-event.js'
import { ENCODE_NOW, HeldEvents, heldKind } from './internal/held-events.js'
import { assertKnownKeys, describeValue } from './internal/known-keys.js'
import { RingBuffer } from './internal/ring-buffer.js'
import type { WireEvent } from './protocol-events.js'
import type { Capability, SnapshotTask } from './session-events.js'
import type { ToWireOptions } from './to-wire.js'
import type { Transport } from './transport.js'
import { PROTOCOL_NAME, PROTOCOL_VERSION } from './version.js'

// The string behind core's `Symbol.for(RUNTIME_INSPECTOR_KEY)`. Reading the
// runtime through this registry symbol keeps core a type-only, optional peer:
// the bridge works with whichever copy of core created the runtime.
const INSPECTOR = Symbol.for('@vega/job-core/inspector')

/**
 * One task-data field the bridge found on an event (`input`, `inputs`,
 * `args`, `value`, `result` or `output`), offered to the `sanitize` hook.
 *
 * @example
 * ```ts
 * const field: TaskPayload = { eventType: 'task:transition', field: 'value', taskId: 3, value: { id: 1 } }
 * ```
 */
export interface TaskPayload {
  readonly eventType: string
  readonly field: string
  readonly taskId?: number
  readonly value: unknown
}

/**
 * Decides what of a task's data may leave the process: return the value to
 * send (it is then encoded with `toWire`), or `undefined` to leave the field
 * out. Without a hook, task data is never sent. If the hook throws, the field
 * carries an encoded error instead of the value.
 *
 * @example
 * ```ts
 * const sanitize: SanitizeHook = ({ field, value }) =>
 *   field === 'result' ? { rows: (value as unknown[]).length } : undefined
 * ```
 */
export type SanitizeHook = (payload: TaskPayload) => unknown

/**
 * Options of {@link connectDevtools}.
 *
 * @example
 * ```ts
 * const options: ConnectDevtoolsOptions = { flushMs: 50, bufferSize: 500 }
 * ```
 */
export interface ConnectDevtoolsOptions {
  /** Batching delay in ms; `0` sends each envelope as it happens. Default 16. */
  readonly flushMs?: number | undefined
  /** Envelopes held between flushes; past it the oldest are dropped and a `session:gap` says so. Default 1000. */
  readonly bufferSize?: number | undefined
  /** Opts task inputs/results in; see {@link SanitizeHook}. */
  readonly sanitize?: SanitizeHook | undefined
  /** The session id; default a random UUID. Fix it for reproducible recordings. */
  readonly sessionId?: string | undefined
  /** Where `ts` and the flush timer come from; default: `ts` from the runtime's clock, the platform's timers for flushing. */
  readonly clock?: Clock | undefined
  /** `src.lib` of every envelope; default the runtime's core, `'@vega/job-core@<version>'`. */
  readonly lib?: string | undefined
  /** Limits for encoding errors and values; `{ stack: false }` makes recordings machine-independent. */
  readonly wire?: ToWireOptions | undefined
  /** Called when the transport or the runtime's `inspect` throws; default `console.error`. */
  readonly onError?: ((error: unknown) => void) | undefined
}

/**
 * Stops a connection: unsubscribes from the runtime, stops listening for
 * control messages and sends what is still buffered. Calling it again does
 * nothing.
 *
 * @example
 * ```ts
 * const disconnect: Disconnect = connectDevtools(runtime, transport)
 * disconnect()
 * ```
 */
export type Disconnect = () => void

const DEFAULT_FLUSH_MS = 16
const DEFAULT_BUFFER_SIZE = 1000

const platformClock: Clock = {
  now: () => Date.now(),
  setTimeout: (callback, ms) => globalThis.setTimeout(callback, ms),
  clearTimeout: (handle) => globalThis.clearTimeout(handle as ReturnType<typeof setTimeout>),
}

/**
 * Connects a runtime to a transport. Sends `session:hello`, then a
 * `session:snapshot` of the live tasks built from the runtime, then every
 * runtime event as it happens, numbered from 1 without gaps. Envelopes wait
 * in a bounded ring buffer for the next flush (every `flushMs`); when it is
 * full the oldest are dropped and the next flush starts with a `session:gap`
 * naming them. A `{ type: 'request-snapshot' }` message from
 * `transport.onMessage` sends a fresh snapshot at once.
 *
 * Throws `TypeError`/`RangeError` at once for a bad transport or options.
 *
 * @example
 * ```ts
 * import { createRuntime, run } from '@vega/job-core'
 * import { connectDevtools, createInProcessTransport, initialState, lanes, reduceAll } from '@vega/job-devtools-protocol'
 *
 * const runtime = createRuntime({ name: 'app' })
 * let state = initialState()
 * const disconnect = connectDevtools(
 *   runtime,
 *   createInProcessTransport((batch) => { state = reduceAll(batch, state) }),
 *   { flushMs: 0, sessionId: 'app-1' },
 * )
 * await run(runtime, async () => 42)
 * console.log(lanes(state, 'app-1'))
 * disconnect()
 * ```
 */
export function connectDevtools(
  runtime: Runtime,
  transport: Transport,
  options: ConnectDevtoolsOptions = {},
): Disconnect {
  const inspector = validate(runtime, transport, options)
  const clock = options.clock ?? platformClock
  const now = options.clock === undefined ? () => inspector.now() : () => clock.now()
  const flushMs = options.flushMs ?? DEFAULT_FLUSH_MS
  const onError = options.onError ?? ((error: unknown) => console.error('[devtools]', error))
  const wire: ToWireOptions = options.wire ?? {}
  const context = { wire, sanitize: options.sanitize }
  const sid = options.sessionId ?? randomSessionId()
  const src: EnvelopeSource = {
    runtime: String(runtime.name),
    lib: options.lib ?? inspector.lib,
  }
  // Envelopes wait as rows of `held`, in the slots the ring hands out: a
  // plain task event as its fields, built into an envelope only if it is
  // still there at the flush (see HeldEvents).
  const capacity = options.bufferSize ?? DEFAULT_BUFFER_SIZE
  const buffer = new RingBuffer(capacity)
  const held = new HeldEvents(capacity)

  let timer: unknown
  let timerSet = false
  let flushing = false
  let flushAgain = false
  let connected = true

  const envelope = (e: WireEvent, seq: number, ts: number): Envelope => ({
    proto: PROTOCOL_NAME,
    v: PROTOCOL_VERSION.major,
    sid,
    seq,
    ts,
    src,
    e,
  })

  const toEnvelope = (slot: number, seq: number): Envelope =>
    envelope(held.take(slot), seq, held.stamp(slot))

  const enqueue = (e: WireEvent): void => {
    held.holdEncoded(buffer.push(), e, now())
  }

  // An event's `at` is the runtime clock's time of the event: the default
  // `ts`, read without another clock call per event.
  const stamp =
    options.clock === undefined
      ? (event: RawEvent): number => (typeof event.at === 'number' ? event.at : inspector.now())
      : (): number => clock.now()

  const flush = (): void => {
    if (timerSet) {
      clock.clearTimeout(timer)
      timerSet = false
    }
    // A transport may call back into the bridge (a consumer that asks for a
    // snapshot, or runs tasks, while receiving): finish this batch first.
    if (flushing) {
      flushAgain = true
      return
    }
    flushing = true
    try {
      do {
        flushAgain = false
        const { lost, items } = buffer.drain(toEnvelope)
        const batch =
          lost === undefined
            ? items
            : [
                envelope(
                  {
                    type: 'session:gap',
                    fromSeq: lost.fromSeq,
                    toSeq: lost.toSeq,
                    reason: lost.reason,
                  },
                  lost.toSeq,
                  now(),
                ),
                ...items,
              ]
        if (batch.length === 0) continue
        try {
          transport.send(batch)
        } catch (error) {
          const first = batch[0] as Envelope
          const last = batch[batch.length - 1] as Envelope
          buffer.markLost(lost?.fromSeq ?? first.seq, last.seq, 'transport-error')
          onError(error)
        }
      } while (flushAgain)
    } finally {
      flushing = false
    }
  }

  const schedule = (): void => {
    if (flushMs === 0) {
      flush()
    } else if (!timerSet) {
      timerSet = true
      timer = clock.setTimeout(flush, flushMs)
    }
  }

  const snapshot = (): boolean => {
    let tasks: readonly SnapshotTask[]
    try {
      tasks = inspector.inspect().tasks.map(toSnapshotTask)
    } catch (error) {
      onError(error)
      return false
    }
    enqueue({ type: 'session:snapshot', upToSeq: buffer.lastSeq, tasks })
    return true
  }

  const capabilities: Capability[] = ['request-snapshot']
  if (wire.stack !== false) capabilities.push('stacks')
  if (options.sanitize !== undefined) capabilities.push('task-values')

  enqueue({ type: 'session:hello', minor: PROTOCOL_VERSION.minor, capabilities })
  // Built from the runtime, not from history; no event can slip in between
  // this snapshot and the subscription below, both are synchronous.
  const initialTasks = inspector.inspect().tasks.map(toSnapshotTask)
  enqueue({ type: 'session:snapshot', upToSeq: buffer.lastSeq, tasks: initialTasks })
  const unsubscribe = inspector.subscribe((event) => {
    const raw = event as unknown as RawEvent
    const kind = heldKind(raw)
    if (kind === ENCODE_NOW) {
      // Encoded first: a sanitize hook may run tasks, whose events come before this one.
      const encoded = encodeEvent(raw, context)
      held.holdEncoded(buffer.push(), encoded, stamp(raw))
    } else {
      held.holdFields(buffer.push(), kind, raw, stamp(raw))
    }
    schedule()
  })
  const stopListening = transport.onMessage?.((message) => {
    if (!connected || !isControlMessage(message)) return
    if (snapshot()) flush()
  })
  flush()

  return () => {
    if (!connected) return
    connected = false
    unsubscribe()
    stopListening?.()
    flush()
  }
}

function toSnapshotTask(task: RuntimeInspection['tasks'][number]): SnapshotTask {
  const out: {
    -readonly [K in keyof SnapshotTask]: SnapshotTask[K]
  } = {
    id: task.id,
    state: task.state,
    attempt: task.attempt,
    since: task.since,
  }
  if (typeof task.label === 'string') out.label = task.label
  if (typeof task.key === 'string') out.key = task.key
  if (typeof task.parentId === 'number') out.parentId = task.parentId
  return out
}

const WHERE = 'connectDevtools(runtime, transport, options)'
const CONNECT_OPTIONS: readonly string[] = [
  'flushMs',
  'bufferSize',
  'sanitize',
  'sessionId',
  'clock',
  'lib',
  'wire',
  'onError',
]
const WIRE_OPTIONS: readonly string[] = [
  'maxDepth',
  'maxItems',
  'maxStringLength',
  'maxNodes',
  'stack',
]

function validate(runtime: unknown, transport: unknown, options: unknown): RuntimeInspector {
  const inspector =
    typeof runtime === 'object' && runtime !== null
      ? (runtime as { [INSPECTOR]?: RuntimeInspector })[INSPECTOR]
      : undefined
  if (inspector === undefined || typeof inspector.subscribe !== 'function') {
    throw new TypeError(
      'connectDevtools(runtime, …): runtime must be a runtime from createRuntime() of @vega/job-core ≥ 1.0.',
    )
  }
  if (
    typeof transport !== 'object' ||
    transport === null ||
    typeof (transport as Transport).send !== 'function'
  ) {
    throw new TypeError(
      'connectDevtools(runtime, transport, …): transport must have a send(batch) method.',
    )
  }
  if (typeof options !== 'object' || options === null) {
    throw new TypeError(
      `connectDevtools(runtime, transport, options): options must be an object, got ${describeValue(options)}.`,
    )
  }
  assertKnownKeys(WHERE, options, CONNECT_OPTIONS)
  const o = options as ConnectDevtoolsOptions
  if (
    o.flushMs !== undefined &&
    !(typeof o.flushMs === 'number' && Number.isFinite(o.flushMs) && o.flushMs >= 0)
  ) {
    throw new RangeError(
      `${WHERE}: options.flushMs must be a finite number ≥ 0, got ${describeValue(o.flushMs)}. Use 0 to send each envelope at once.`,
    )
  }
  if (o.bufferSize !== undefined && !(Number.isInteger(o.bufferSize) && o.bufferSize >= 1)) {
    throw new RangeError(
      `${WHERE}: options.bufferSize must be an integer ≥ 1, got ${describeValue(o.bufferSize)}.`,
    )
  }
  if (o.sessionId !== undefined && (typeof o.sessionId !== 'string' || o.sessionId === '')) {
    throw new TypeError(
      `${WHERE}: options.sessionId must be a non-empty string, got ${describeValue(o.sessionId)}.`,
    )
  }
  if (o.sanitize !== undefined && typeof o.sanitize !== 'function') {
    throw new TypeError(
      `${WHERE}: options.sanitize must be a function, got ${describeValue(o.sanitize)}.`,
    )
  }
  if (o.onError !== undefined && typeof o.onError !== 'function') {
    throw new TypeError(
      `${WHERE}: options.onError must be a function, got ${describeValue(o.onError)}.`,
    )
  }
  if (o.lib !== undefined && typeof o.lib !== 'string') {
    throw new TypeError(`${WHERE}: options.lib must be a string, got ${describeValue(o.lib)}.`)
  }
  if (
    o.clock !== undefined &&
    (typeof o.clock !== 'object' ||
      o.clock === null ||
      typeof o.clock.now !== 'function' ||
      typeof o.clock.setTimeout !== 'function' ||
      typeof o.clock.clearTimeout !== 'function')
  ) {
    throw new TypeError(
      `${WHERE}: options.clock must have now, setTimeout and clearTimeout, got ${describeValue(o.clock)}.`,
    )
  }
  if (o.wire !== undefined) {
    if (typeof o.wire !== 'object' || o.wire === null) {
      throw new TypeError(`${WHERE}: options.wire must be an object, got ${describeValue(o.wire)}.`)
    }
    assertKnownKeys(`${WHERE} in options.wire`, o.wire, WIRE_OPTIONS)
  }
  return inspector
}

function randomSessionId(): string {
  const crypto = (globalThis as { crypto?: { randomUUID?: () => string } }).crypto
  if (typeof crypto?.randomUUID === 'function') return crypto.randomUUID()
  return `s-${Date.now().toString(36)}-${Math.random().toString(36).slice(2, 10)}`
}
