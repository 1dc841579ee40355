import { assertKnownKeys } from './assert-known-keys.js'
import { hashKey } from './hash-key.js'
import { shaperTag } from './internal/shaper-tag.js'
import { releaseHold } from './internal/shaper-window.js'
import { installShaping } from './internal/shaping.js'
import { shape } from './internal/stages/shape.js'
import { tagTaskFn } from './task-tag.js'
import type { Shaper } from './types/shaper.js'
import type { Key, TaskFn } from './types/task.js'

const BINDING_KEYS: readonly string[] = ['key']
const SHAPING = { shape, releaseHold }

/**
 * Binds a time-window shaper and a key to a taskFn. Shaping happens before
 * the dispatch seam, so merged calls never reach a coordinator; wrap the
 * shaped taskFn with `withCoordinator` to combine both. Calls share a window
 * when they use the same shaper value and the same key (in one runtime).
 * Throws `TypeError` at bind time for a missing or unhashable key, an
 * unknown binding field, a value that is not a shaper, or a taskFn that is
 * not a function.
 *
 * @example
 * ```ts
 * // search-as-you-type: squash keystrokes, then let the newest request win
 * const search = withCoordinator(
 *   withShaper(fetchResults, debounce(300), { key: 'search' }),
 *   restartCoordinator,
 *   { key: 'search' },
 * )
 * ```
 */
export function withShaper<T>(taskFn: TaskFn<T>, shaper: Shaper, binding: { key: Key }): TaskFn<T> {
  if (typeof taskFn !== 'function') {
    throw new TypeError(`withShaper(taskFn, …): taskFn must be a function, got ${typeof taskFn}.`)
  }
  if (
    shaper === null ||
    typeof shaper !== 'object' ||
    (shaper.kind !== 'debounce' && shaper.kind !== 'throttle')
  ) {
    throw new TypeError(
      'withShaper(…, shaper, …): use debounce(ms) or throttle(ms) to make a shaper.',
    )
  }
  if (binding === null || typeof binding !== 'object') {
    throw new TypeError(
      'withShaper(…, { key }): a key is required, e.g. { key: ["search", userId] }.',
    )
  }
  // Before the missing-key check: `{ kye }` gets "did you mean 'key'?".
  assertKnownKeys('withShaper(taskFn, shaper, binding)', binding, BINDING_KEYS)
  if (binding.key === undefined) {
    throw new TypeError(
      'withShaper(…, { key }): a key is required, e.g. { key: ["search", userId] }.',
    )
  }
  installShaping(SHAPING)
  return tagTaskFn(taskFn, shaperTag, { shaper, hash: hashKey(binding.key) })
}
