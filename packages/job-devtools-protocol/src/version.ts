/**
 * The protocol's version. `major` is the envelope's `v`: it changes only when
 * something is removed, renamed, retyped or changes meaning. `minor` grows
 * when an event, an optional field or an enum value is added; a producer
 * announces it in `session:hello`, and consumers ignore what they do not know.
 *
 * @example
 * ```ts
 * if (hello.e.type === 'session:hello' && hello.e.minor > PROTOCOL_VERSION.minor) {
 *   console.info('the producer is newer; unknown events will be counted and skipped')
 * }
 * ```
 */
export const PROTOCOL_VERSION: { readonly major: 1; readonly minor: 2 } = Object.freeze({
  major: 1,
  // 1.1: `task:abandoned`, `task:exited.abandoned`, the `overflow` cancel reason.
  // 1.2: `coordination:dropped`.
  minor: 2,
})

/**
 * The value of every envelope's `proto` field: it tells a vega-job envelope
 * apart from other messages sharing a channel.
 *
 * @example
 * ```ts
 * const mine = (data: unknown) => (data as { proto?: unknown }).proto === PROTOCOL_NAME
 * ```
 */
export const PROTOCOL_NAME: 'vega-job' = 'vega-job'
