import { isTerminalState, type PluginHost, type Runtime, type Task } from '@vega/job-core'
import type { CoordinationBinding } from './coordination-tag.js'

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
   * hash → its earliest non-terminal coordinated task (in the order they
   * reached a coordinator): what dedupe and exhaust ask on every call, so it
   * is one `Map.get` with nothing to unwrap.
   */
  private readonly first = new Map<string, Task<unknown>>()
  /** hash → its other live tasks, in order; only for keys with more than one. */
  private readonly later = new Map<string, LaterTasks>()
  /**
   * Each indexed task's binding (whose hash it is indexed under), by task
   * id. Core hands a settle callback the task, so one callback serves every
   * indexed task and finds the binding here: a leader costs this entry
   * instead of a closure and its context, which is larger. Keyed by the
   * id, a number, not by the task object, for which the engine would first
   * have to create and store an identity hash.
   */
  private readonly bindings = new Map<number, CoordinationBinding>()
  private readonly settled = (task: Task<unknown>): void => {
    const id = task.id
    const binding = this.bindings.get(id)
    if (binding === undefined) return
    this.bindings.delete(id)
    const hash = binding.hash
    // Most keys have one live task: then there is no later list to look up,
    // and a task its binding says leads is the key's first (skipping both
    // lookups leaves a leader's settle two Map operations).
    const later = this.later.size === 0 ? undefined : this.later.get(hash)
    let first: boolean
    if (binding.leading === task) {
      binding.leading = undefined
      first = true
    } else first = this.first.get(hash) === task
    if (!first) {
      if (later !== undefined && later.left() === 0) this.later.delete(hash)
      return
    }
    const next = later?.takeEarliest()
    if (next === undefined) {
      this.first.delete(hash)
      if (later !== undefined) this.later.delete(hash)
      return
    }
    // The next earliest moves to the front.
    this.first.set(hash, next)
    if (later!.live === 0) this.later.delete(hash)
  }
  /** store owner (one per stateful coordinator) → hash → state. */
  readonly stores: Map<object, Map<string, KeyState>> = new Map()

  constructor(host: PluginHost) {
    this.host = host
  }

  /**
   * Adds `task` under its binding's hash; it leaves the moment it settles, and then
   * `onSettled` (if any) runs. Each task is tracked once (its caller checks).
   */
  track(
    binding: CoordinationBinding,
    task: Task<unknown>,
    onSettled?: (task: Task<unknown>) => void,
  ): void {
    const hash = binding.hash
    if (!this.first.has(hash)) this.first.set(hash, task)
    else {
      let later = this.later.get(hash)
      if (later === undefined) {
        later = new LaterTasks()
        this.later.set(hash, later)
      }
      later.add(task)
    }
    this.bindings.set(task.id, binding)
    // Core runs settle callbacks in the order they were added: the index is left first.
    this.host.onSettled(task, this.settled)
    if (onSettled !== undefined) this.host.onSettled(task, onSettled)
  }

  /** The earliest live task with `hash`, without building the peers array. */
  firstOf(hash: string): Task<unknown> | undefined {
    return this.first.get(hash)
  }

  /** The other live tasks with `hash`, earliest first. */
  peersOf(hash: string, intent: Task<unknown>): Task<unknown>[] {
    const first = this.first.get(hash)
    if (first === undefined) return []
    const peers = first === intent ? [] : [first]
    this.later.get(hash)?.collectLive(peers, intent)
    return peers
  }

  sizes(): { keys: number; tasks: number } {
    return { keys: this.first.size, tasks: this.bindings.size }
  }
}

/**
 * A key's live tasks after its first, in the order they were indexed. A
 * task that settles is not searched for: it is counted out (`left`) and
 * skipped when the front reaches it, and the list is rebuilt once most of
 * it is settled, so a key with a thousand waiters costs O(1) per call and
 * per settle, and never holds more than twice its live tasks.
 */
class LaterTasks {
  private tasks: (Task<unknown> | undefined)[] = []
  private head = 0
  /** Indexed and neither settled nor taken to the front yet. */
  live = 0

  add(task: Task<unknown>): void {
    this.tasks.push(task)
    this.live++
  }

  /** One of them settled; returns how many are left. */
  left(): number {
    this.live--
    const held = this.tasks.length - this.head
    if (held > 32 && held > 2 * this.live) {
      const kept: Task<unknown>[] = []
      this.collectLive(kept, undefined)
      this.tasks = kept
      this.head = 0
    }
    return this.live
  }

  /** Takes out the earliest task that has not settled (the key's new first). */
  takeEarliest(): Task<unknown> | undefined {
    const tasks = this.tasks
    while (this.head < tasks.length) {
      const task = tasks[this.head]!
      tasks[this.head] = undefined
      this.head++
      if (!isTerminalState(task.state)) {
        this.live--
        return task
      }
    }
    return undefined
  }

  /** Appends the tasks that have not settled, but `except`, to `into`, in order. */
  collectLive(into: Task<unknown>[], except: Task<unknown> | undefined): void {
    const tasks = this.tasks
    for (let i = this.head; i < tasks.length; i++) {
      const task = tasks[i]!
      if (task !== except && !isTerminalState(task.state)) into.push(task)
    }
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
