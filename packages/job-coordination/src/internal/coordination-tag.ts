import { createTaskTag, type Task, type TaskTag } from '@vega/job-core'
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

/** Per coordinator: hash → its binding. Weak: a coordinator let go takes its bindings with it. */
const bindings = new WeakMap<Coordinator, Map<string, CoordinationBinding>>()

/**
 * The binding of `coordinator` and `hash`, made once and shared by every
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
 * call leaves).
 */
export function bindingFor(coordinator: Coordinator, hash: string): CoordinationBinding {
  let kept = bindings.get(coordinator)
  if (kept === undefined) {
    kept = new Map()
    bindings.set(coordinator, kept)
  }
  let binding = kept.get(hash)
  if (binding === undefined) {
    if (kept.size >= BINDINGS_KEPT) kept.clear()
    binding = new CoordinationBinding(coordinator, hash)
    kept.set(hash, binding)
  }
  return binding
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
