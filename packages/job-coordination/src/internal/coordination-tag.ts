import { createTaskTag, hashKey, type Key, type Task, type TaskTag } from '@vega/job-core'
import type { Coordinator } from '../types.js'
import type { KeyLane } from './key-lanes.js'
import type { KeyPeers } from './scope.js'
import { type Strategy, strategyOf } from './strategy.js'

/**
 * What `withCoordinator` attaches to a taskFn: one object per coordinator
 * and key, shared by every taskFn bound to them (see {@link bindingFor}).
 */
export class CoordinationBinding {
  readonly coordinator: Coordinator
  readonly hash: string
  /** The coordinator's rule when it is a built-in (looked up once, at bind time); else `undefined`. */
  readonly strategy: Strategy | undefined
  /**
   * The live task a call of this binding leads (set by dedupe when it
   * proceeds, cleared by the scope the moment that task settles). A call
   * of the same coordinator and key made while it is in flight is then
   * merged without a lookup of its hash. The task may belong to another
   * runtime: the kernel refuses a peer of another runtime, and the call then
   * goes through the handler, which looks in its own runtime's index.
   */
  leading: Task<unknown> | undefined = undefined
  /**
   * The peer-index entry and the lane the last call of this binding joined.
   * The claim's hooks of that call, and the next calls of the same
   * coordinator and key, find them here without looking the key up; each is
   * checked (same runtime, still current) before use, and one that is no
   * longer current has let go of its runtime and its tasks.
   */
  peers: KeyPeers | undefined = undefined
  lane: KeyLane | undefined = undefined

  constructor(coordinator: Coordinator, hash: string) {
    this.coordinator = coordinator
    this.hash = hash
    this.strategy = strategyOf(coordinator)
  }
}

/** How many bindings {@link bindingFor} keeps per coordinator. */
const BINDINGS_KEPT = 1024

/** Keys of up to this many items are found item by item; longer ones by their hash. */
const ITEMS_WALKED = 4

/** Where the walk of a key that is not an array starts (an array's starts at its length). */
const NOT_AN_ARRAY = -1

/** One step of a walk: the next step (or, after the last item, the binding) by item. */
type Step = Map<unknown, unknown>

/**
 * The bindings kept for one coordinator. Each is kept by its key's hash;
 * a key of a few strings, numbers, booleans or nulls (`['doc', 42]`,
 * `'user'`) also leads to it item by item, so binding such a key per call
 * finds its binding without hashing the key (no string built, nothing
 * looked up by a fresh string). Two such keys walk to one place exactly
 * when their hashes are equal: items compare as a `Map` compares them
 * (`0` and `-0` alike, `NaN` equal to itself, `1` unlike `'1'`), which is
 * how the hash tells them apart.
 */
class KeptBindings {
  private readonly byHash = new Map<string, CoordinationBinding>()
  private readonly byItems: Step = new Map()

  /** The binding kept for `key`, found by walking its items; `undefined` when not kept or not walked. */
  walk(key: unknown): CoordinationBinding | undefined {
    const array = Array.isArray(key)
    const count = array ? key.length : 1
    if (count > ITEMS_WALKED) return undefined
    let found = this.byItems.get(array ? count : NOT_AN_ARRAY)
    for (let i = 0; i < count && found !== undefined; i++) {
      const item: unknown = array ? key[i] : key
      if (!isWalked(item)) return undefined
      found = (found as Step).get(item)
    }
    return found as CoordinationBinding | undefined
  }

  /**
   * The binding for `hash`, made if none is kept. A key seen for the
   * second time is also kept for the walk: one seen once may never come
   * back, and a step per item would cost a key bound once per call more
   * than its hash does.
   */
  keep(coordinator: Coordinator, key: unknown, hash: string): CoordinationBinding {
    let binding = this.byHash.get(hash)
    if (binding === undefined) {
      if (this.byHash.size >= BINDINGS_KEPT) {
        this.byHash.clear()
        this.byItems.clear()
      }
      binding = new CoordinationBinding(coordinator, hash)
      this.byHash.set(hash, binding)
      return binding
    }
    const array = Array.isArray(key)
    const count = array ? key.length : 1
    if (count > ITEMS_WALKED) return binding
    for (let i = 0; i < count; i++) if (!isWalked(array ? key[i] : key)) return binding
    let step = this.byItems
    let at: unknown = array ? count : NOT_AN_ARRAY
    for (let i = 0; i < count; i++) {
      let next = step.get(at) as Step | undefined
      if (next === undefined) {
        next = new Map()
        step.set(at, next)
      }
      step = next
      at = array ? key[i] : key
    }
    step.set(at, binding)
    return binding
  }
}

/** Whether a key's item is one a walk compares: a string, number, boolean or null. */
function isWalked(item: unknown): boolean {
  const type = typeof item
  return type === 'string' || type === 'number' || type === 'boolean' || item === null
}

/** Per coordinator: its bindings. Weak: a coordinator let go takes its bindings with it. */
const bindings = new WeakMap<Coordinator, KeptBindings>()

/**
 * The binding of `coordinator` and `key`, made once and shared by every
 * taskFn bound to them. An application that binds per call
 * (`withCoordinator(() => save(doc), serialize, { key })` inside the
 * call) then makes no binding object per call, and its calls find their
 * key's index entry and lane remembered, as the calls of a taskFn bound
 * once do. A binding is immutable but for those remembered places, which
 * are checked before use. Up to {@link BINDINGS_KEPT} per coordinator are
 * kept; when that many are, they are let go together and the next calls
 * make new ones, so the bindings kept never grow with the keys seen. A
 * binding kept reaches a runtime only while a call of its key is live
 * there (a lane or an index entry drops its runtime when its key's last
 * call leaves). The key is hashed only when it is not found by its items:
 * `hashKey`'s `TypeError` for a key that cannot be hashed comes from here.
 */
export function bindingFor(coordinator: Coordinator, key: Key): CoordinationBinding {
  let kept = bindings.get(coordinator)
  if (kept === undefined) {
    kept = new KeptBindings()
    bindings.set(coordinator, kept)
  }
  return kept.walk(key) ?? kept.keep(coordinator, key, hashKey(key))
}

/**
 * The tag `installCoordination` claims. Its plugin name is what the kernel's
 * loud-fail guard prints when the plugin is missing, so it must be the name
 * of the exported plugin value.
 */
export const coordinationTag: TaskTag<CoordinationBinding> = createTaskTag<CoordinationBinding>(
  'installCoordination',
  { key: (binding) => binding.hash },
)
