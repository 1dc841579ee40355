import type { PluginHost, Runtime, Task } from '@vega/job-core'

/** Per-key state a strategy keeps (a serialize queue, a keepLatest slot). */
export interface KeyState {
  /** Calls parked behind this key, for inspection. */
  readonly waiting: number
}

/**
 * Everything coordination keeps for one runtime: the peer index and the
 * per-key state of stateful strategies. Both only hold keys that have a live
 * task, so memory follows live keys, never keys seen.
 */
export class CoordinationScope {
  readonly host: PluginHost
  /** hash → its non-terminal coordinated tasks, in the order they reached a coordinator. */
  private readonly index = new Map<string, Set<Task<unknown>>>()
  /** store owner (one per stateful coordinator) → hash → state. */
  readonly stores: Map<object, Map<string, KeyState>> = new Map()
  private indexed = 0

  constructor(host: PluginHost) {
    this.host = host
  }

  /** Adds `task` under `hash`; it leaves the moment it settles, then `onSettled` runs. */
  track(hash: string, task: Task<unknown>, onSettled: () => void): void {
    let bucket = this.index.get(hash)
    if (bucket === undefined) {
      bucket = new Set()
      this.index.set(hash, bucket)
    }
    bucket.add(task)
    this.indexed++
    const owner = bucket
    this.host.onSettled(task, () => {
      if (owner.delete(task)) this.indexed--
      if (owner.size === 0 && this.index.get(hash) === owner) this.index.delete(hash)
      onSettled()
    })
  }

  /** The other live tasks with `hash`, earliest first. */
  peersOf(hash: string, intent: Task<unknown>): Task<unknown>[] {
    const bucket = this.index.get(hash)
    const peers: Task<unknown>[] = []
    if (bucket === undefined) return peers
    for (const task of bucket) if (task !== intent) peers.push(task)
    return peers
  }

  sizes(): { keys: number; tasks: number } {
    return { keys: this.index.size, tasks: this.indexed }
  }
}

const scopes = new WeakMap<Runtime, CoordinationScope>()

export function createScope(host: PluginHost): CoordinationScope {
  const scope = new CoordinationScope(host)
  scopes.set(host.runtime, scope)
  return scope
}

export function scopeOfRuntime(runtime: Runtime): CoordinationScope | undefined {
  return scopes.get(runtime)
}
