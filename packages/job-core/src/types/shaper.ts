// Time-window shapers: debounce and throttle.

/**
 * A debounce window: calls with the same key closer than `ms` are merged.
 *
 * @example
 * ```ts
 * const shaper: DebounceShaper = debounce(300, { maxWait: 1_000 })
 * ```
 */
export interface DebounceShaper {
  readonly kind: 'debounce'
  readonly ms: number
  readonly leading: boolean
  readonly trailing: boolean
  readonly maxWait: number | undefined
}

/**
 * A throttle window: at most one dispatch per `ms` per key.
 *
 * @example
 * ```ts
 * const shaper: ThrottleShaper = throttle(1_000, { trailing: false })
 * ```
 */
export interface ThrottleShaper {
  readonly kind: 'throttle'
  readonly ms: number
  readonly leading: boolean
  readonly trailing: boolean
}

/**
 * A time-window policy that merges bursts of calls with the same key before
 * they are dispatched. Build one with {@link debounce} or {@link throttle};
 * bind it with {@link withShaper}.
 *
 * @example
 * ```ts
 * const shaper: Shaper = debounce(300)
 * ```
 */
export type Shaper = DebounceShaper | ThrottleShaper

/**
 * Options of {@link debounce}.
 *
 * @example
 * ```ts
 * const options: DebounceOptions = { leading: true, maxWait: 2_000 }
 * ```
 */
export interface DebounceOptions {
  /** Dispatch the first call of a burst at once; default false. */
  leading?: boolean | undefined
  /** Dispatch the last call of a burst `ms` after it; default true. */
  trailing?: boolean | undefined
  /** The longest a burst may postpone its trailing dispatch, in ms (≥ `ms`). */
  maxWait?: number | undefined
}

/**
 * Options of {@link throttle}.
 *
 * @example
 * ```ts
 * const options: ThrottleOptions = { trailing: false }
 * ```
 */
export interface ThrottleOptions {
  /** Dispatch the first call of a window at once; default true. */
  leading?: boolean | undefined
  /** Dispatch the last call of a window when it ends; default true. */
  trailing?: boolean | undefined
}
