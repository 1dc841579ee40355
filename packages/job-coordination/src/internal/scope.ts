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
  /**
   * hash → its non-terminal coordinated tasks, in the order they reached a
   * coordinator. Most keys have one live task, so a lone task is stored as
   * is and a `Set` is only made for the second.
   */
  private readonly index = new Map<string, Task<unknown> | Set<Task<unknown>>>()
  /** store owner (one per stateful coordinator) → hash → state. */
  readonly stores: Map<object, Map<string, KeyState>> = new Map()
  private indexed = 0

  constructor(host: PluginHost) {
    this.host = host
  }

  /** Adds `task` under `hash`; it leaves the moment it settles, then `onSettled` (if any) runs. */
  track(hash: string, task: Task<unknown>, onSettled?: () => void): void {
    const bucket = this.index.get(hash)
    if (bucket === undefined) this.index.set(hash, task)
    else if (bucket instanceof Set) bucket.add(task)
    else this.index.set(hash, new Set([bucket, task]))
    this.indexed++
    this.host.onSettled(task, () => {
      this.untrack(hash, task)
      onSettled?.()
    })
  }

  private untrack(hash: string, task: Task<unknown>): void {
    const bucket = this.index.get(hash)
    if (bucket === task) {
      this.index.delete(hash)
      this.indexed--
    } else if (bucket instanceof Set && bucket.delete(task)) {
      this.indexed--
      if (bucket.size === 0) this.index.delete(hash)
    }
  }

  /** The earliest live task with `hash`, without building the peers array. */
  firstOf(hash: string): Task<unknown> | undefined {
    const bucket = this.index.get(hash)
    if (bucket === undefined || !(bucket instanceof Set)) return bucket
    for (const task of bucket) return task
    return undefined
  }

  /** The other live tasks with `hash`, earliest first. */
  peersOf(hash: string, intent: Task<unknown>): Task<unknown>[] {
    const bucket = this.index.get(hash)
    if (bucket === undefined || bucket === intent) return []
    if (!(bucket instanceof Set)) return [bucket]
    const peers: Task<unknown>[] = []
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
