import { closestKey } from './internal/closest-key.js'

/**
 * Throws a `TypeError` when `options` has an own key that is not in `known`,
 * naming the key and the closest known one. In JavaScript a misspelled
 * option (`{ lable: 'x' }`, `{ concurency: 3 }`) would otherwise be ignored
 * without a word; this turns it into an error at the call that made it.
 *
 * `where` is how the user's call reads, e.g. `'run(runtime, taskFn, options)'`;
 * the message starts with it. `options` must be an object (a `TypeError`
 * otherwise); `undefined` values count as present keys, so `{ lable:
 * undefined }` is caught too. Only own enumerable string keys are checked.
 *
 * @example
 * ```ts
 * import { assertKnownKeys } from '@vega/job-core'
 *
 * function connect(options: { url: string; retries?: number }) {
 *   assertKnownKeys('connect(options)', options, ['url', 'retries'])
 *   // …
 * }
 * connect({ url: 'ws://x', retires: 3 } as never)
 * // TypeError: connect(options): unknown option 'retires'; did you mean 'retries'?
 * //   Known options: 'url', 'retries'.
 * ```
 */
export function assertKnownKeys(where: string, options: object, known: readonly string[]): void {
  if (options === null || (typeof options !== 'object' && typeof options !== 'function')) {
    throw new TypeError(
      `${where}: options must be an object, got ${describeOptions(options)}. Pass { … } or leave it out.`,
    )
  }
  // for…in allocates nothing, which matters on hot paths such as run().
  for (const key in options) {
    if (!Object.hasOwn(options, key) || known.includes(key)) continue
    throw new TypeError(unknownKeyMessage(where, key, known))
  }
}

function unknownKeyMessage(where: string, key: string, known: readonly string[]): string {
  const suggestion = closestKey(key, known)
  const list = known.length === 0 ? 'none' : known.map(quote).join(', ')
  return suggestion === undefined
    ? `${where}: unknown option ${quote(key)}. Known options: ${list}. Remove it or check its spelling.`
    : `${where}: unknown option ${quote(key)}; did you mean ${quote(suggestion)}? Known options: ${list}.`
}

function quote(value: string): string {
  return `'${value.replace(/\\/g, '\\\\').replace(/'/g, "\\'").replace(/\n/g, '\\n')}'`
}

function describeOptions(value: unknown): string {
  return typeof value === 'string' ? quote(value) : String(value)
}
