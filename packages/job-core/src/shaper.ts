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
