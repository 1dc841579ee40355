import { createTaskTag, type Task, type TaskTag } from '@vega/job-core'
import type { Coordinator } from '../types.js'
import type { KeyLane } from './key-lanes.js'
import type { KeyPeers } from './scope.js'
import { type Strategy, strategyOf } from './strategy.js'

/** What `withCoordinator` attaches to a taskFn. */
export class CoordinationBinding {
  readonly coordinator: Coordinator
  readonly hash: string
  /** The coordinator's rule when it is a built-in (looked up once, at bind time); else `undefined`. */
  readonly strategy: Strategy | undefined
  /**
   * The live task a call of this very taskFn leads (set by dedupe when it
   * proceeds, cleared by the scope the moment that task settles). A taskFn
   * bound once and called again while its call is in flight is then merged
   * without a lookup of its hash. The task may belong to another runtime:
   * the kernel refuses a peer of another runtime, and the call then goes
   * through the handler, which looks in its own runtime's index.
   */
  leading: Task<unknown> | undefined = undefined
  /**
   * The peer-index entry and the lane the last call of this binding joined.
   * The claim's hooks of that call, and the next calls of a taskFn bound
   * once, find them here without looking the key up; each is checked (same
   * runtime, still current) before use, and one that is no longer current
   * has let go of its runtime and its tasks.
   */
  peers: KeyPeers | undefined = undefined
  lane: KeyLane | undefined = undefined

  constructor(coordinator: Coordinator, hash: string) {
    this.coordinator = coordinator
    this.hash = hash
    this.strategy = strategyOf(coordinator)
  }
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
