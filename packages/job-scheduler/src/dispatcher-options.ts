import { assertKnownKeys } from '@vega/job-core'
import type { AggregateExchange, ExchangeHandler } from './aggregate-exchange.js'
import type { AggregateSchedulerSupplier } from './aggregate-scheduler-supplier.js'
import { DEFAULT_PARALLELISM } from './group-key.js'
import { defaultNow } from './internal/stats-recorder.js'
import { requireFunction, requireName, requirePositiveInteger } from './internal/validate.js'

const DISPATCHER_OPTIONS: readonly string[] = [
  'name',
  'handle',
  'source',
  'parallelism',
  'schedulerSupplier',
  'onError',
  'maxInFlight',
  'now',
]

/**
 * What a handler error does. `'fatal'` (the default, as in Wow): intake
 * closes, admitted exchanges drain (or are dropped by `forceStop`), and
 * `stopGracefully()` rejects with the error. `'resume'`: the dispatcher keeps
 * going and reports each error with `console.error`. A function: the
 * dispatcher keeps going and calls it for each error; if it throws, what it
 * throws is fatal.
 *
 * @example
 * ```ts
 * const onError: DispatcherErrorPolicy<OrderCommand> = (error, command) => log.warn({ error, id: command.aggregateId.id })
 * ```
 */
export type DispatcherErrorPolicy<E> = 'fatal' | 'resume' | ((error: unknown, exchange: E) => void)

/**
 * Wow's dispatcher states: NEW → PREPARED → RUNNING → STOPPING → STOPPED.
 *
 * @example
 * ```ts
 * if (dispatcher.state === 'RUNNING') dispatcher.quiesce()
 * ```
 */
export type DispatcherState = 'NEW' | 'PREPARED' | 'RUNNING' | 'STOPPING' | 'STOPPED'

/**
 * Options of {@link AggregateDispatcher}.
 *
 * @example
 * ```ts
 * const options: AggregateDispatcherOptions<OrderCommand> = {
 *   name: 'order-commands',
 *   parallelism: 16,
 *   source: commandStream, // or call dispatcher.dispatch(command)
 *   handle: (command, signal) => apply(command, signal),
 * }
 * ```
 */
export interface AggregateDispatcherOptions<E extends AggregateExchange> {
  /** Names the dispatcher in errors and stats. */
  readonly name: string
  /** Handles one exchange (with a signal that aborts on force-stop); a returned promise holds its group until it settles. */
  readonly handle: ExchangeHandler<E>
  /** Pulled from `start()` until it ends (which drains and stops the dispatcher) or intake closes. */
  readonly source?: AsyncIterable<E> | undefined
  /** The number of ordering groups (Wow's dispatcher `parallelism`); default {@link DEFAULT_PARALLELISM}. */
  readonly parallelism?: number | undefined
  /**
   * Where each named aggregate's scheduler comes from. A supplier passed here
   * is borrowed: the dispatcher never stops it. Without one, the dispatcher
   * creates a `DefaultAggregateSchedulerSupplier(name)` and owns it (stopped
   * gracefully after the drain, forced by `forceStop`).
   */
  readonly schedulerSupplier?: AggregateSchedulerSupplier | undefined
  /** Default `'fatal'`. */
  readonly onError?: DispatcherErrorPolicy<E> | undefined
  /** Pulling from `source` pauses while this many exchanges are admitted and unfinished; default 1024. */
  readonly maxInFlight?: number | undefined
  /** The clock of latency and wait figures, in ms; default `performance.now`. */
  readonly now?: (() => number) | undefined
}

/** The options of an {@link AggregateDispatcherOptions} object, checked and defaulted. */
export interface ResolvedDispatcherOptions<E> {
  readonly name: string
  readonly handle: ExchangeHandler<E>
  readonly parallelism: number
  readonly maxInFlight: number
  readonly onError: DispatcherErrorPolicy<E>
  readonly now: () => number
}

/** Checks the dispatcher's options, with a `TypeError` / `RangeError` naming the bad one. */
export function resolveDispatcherOptions<E extends AggregateExchange>(
  options: AggregateDispatcherOptions<E>,
): ResolvedDispatcherOptions<E> {
  const where = 'new AggregateDispatcher(options)'
  if (typeof options !== 'object' || options === null) {
    throw new TypeError(`${where}: options must be an object with name and handle.`)
  }
  assertKnownKeys(where, options, DISPATCHER_OPTIONS)
  const name = requireName(options.name, where, 'options.name')
  requireFunction(options.handle, where, 'options.handle')
  const parallelism = requirePositiveInteger(
    options.parallelism ?? DEFAULT_PARALLELISM,
    where,
    'options.parallelism',
  )
  const maxInFlight = requirePositiveInteger(
    options.maxInFlight ?? 1024,
    where,
    'options.maxInFlight',
  )
  if (
    options.source !== undefined &&
    typeof (options.source as { [Symbol.asyncIterator]?: unknown })[Symbol.asyncIterator] !==
      'function'
  ) {
    throw new TypeError(
      `${where}: options.source must be an AsyncIterable (or omit it and call dispatch()).`,
    )
  }
  const onError = options.onError ?? 'fatal'
  if (onError !== 'fatal' && onError !== 'resume' && typeof onError !== 'function') {
    throw new TypeError(`${where}: options.onError must be 'fatal', 'resume' or a function.`)
  }
  if (options.now !== undefined) requireFunction(options.now, where, 'options.now')
  return {
    name,
    handle: options.handle,
    parallelism,
    maxInFlight,
    onError,
    now: options.now ?? defaultNow,
  }
}

/**
 * Applies the `onError` policy to a handler's error: returns what is fatal
 * to the dispatcher (the error under `'fatal'`, or what a policy function
 * threw), or `undefined` when the dispatcher keeps going.
 */
export function applyErrorPolicy<E>(
  policy: DispatcherErrorPolicy<E>,
  name: string,
  error: unknown,
  exchange: E,
): { readonly error: unknown } | undefined {
  if (policy === 'fatal') return { error }
  if (policy === 'resume') {
    console.error(`[${name}] Exchange handler failed; resuming.`, error)
    return undefined
  }
  try {
    policy(error, exchange)
    return undefined
  } catch (thrown) {
    return { error: thrown }
  }
}
