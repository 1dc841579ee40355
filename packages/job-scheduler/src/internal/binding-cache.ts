import { groupOf, groupOfHash, javaStringHashCode, toGroupKey } from '../group-key.js'
import type { NamedAggregate } from '../named-aggregate.js'

/**
 * The binding `withAggregate` puts on a taskFn: a frozen `{ aggregate, id }`
 * that also keeps the id's Java hash, private (users see only the two public
 * fields), so the backend finds a task's group from it at admission and at
 * release without walking the id's characters twice per task.
 */
export class InternedBinding {
  readonly aggregate: NamedAggregate
  readonly id: string
  readonly #hash: number

  constructor(aggregate: NamedAggregate, id: string) {
    this.aggregate = aggregate
    this.id = id
    this.#hash = javaStringHashCode(id)
    Object.freeze(this)
  }

  /**
   * `toGroupKey(binding.id, parallelism)` for a `parallelism` validated once:
   * from the kept hash when `withAggregate` made the binding; any other
   * (a binding made with the public tag) is hashed, and a non-string id
   * rejected, as `toGroupKey` does.
   */
  static groupOf(binding: { readonly id: unknown }, parallelism: number): number {
    return (
      InternedBinding.admittedGroupOf(binding, parallelism) ??
      // Not a string: toGroupKey rejects it with its own message.
      toGroupKey(binding.id as string, parallelism)
    )
  }

  /**
   * The group of an admitted job's binding, or `undefined` for an id that
   * is not a string (admission refused it). The kept hash is read first: a
   * release then does not load the id, a string last touched at admission
   * and long out of the cache.
   */
  static admittedGroupOf(
    binding: { readonly id: unknown },
    parallelism: number,
  ): number | undefined {
    if (#hash in binding) return groupOfHash((binding as InternedBinding).#hash, parallelism)
    const id = binding.id
    return typeof id === 'string' ? groupOf(id, parallelism) : undefined
  }
}

/**
 * Bindings kept for reuse, at most this many (then forgotten all at once),
 * so the cache stays small (the README's "What a message costs on a runtime"
 * has the bytes). A service usually
 * sends several commands to one aggregate within a short time, and each of
 * them waiting behind its group then shares one binding instead of holding
 * its own.
 */
const MAX_INTERNED = 16_384
const interned = new Map<string, InternedBinding>()

/**
 * The binding of `(aggregate, id)`: the one made last time for this id when
 * it was for the same (cached, so identical) named aggregate, or a new one.
 * Bindings are frozen, so sharing one between calls is invisible to them.
 */
export function internBinding(aggregate: NamedAggregate, id: string): InternedBinding {
  const known = interned.get(id)
  if (known !== undefined && known.aggregate === aggregate) return known
  const binding = new InternedBinding(aggregate, id)
  if (interned.size >= MAX_INTERNED) interned.clear()
  interned.set(id, binding)
  return binding
}

/** Bindings kept now (tests). */
export function internedBindings(): number {
  return interned.size
}
