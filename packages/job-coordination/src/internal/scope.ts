import { isTerminalState, type PluginHost, type Runtime, type Task } from '@vega/job-core'
import type { CoordinationBinding } from './coordination-tag.js'
import type { Strategy } from './strategy.js'

/** Per-key state a strategy keeps (a serialize queue, a keepLatest slot). */
export interface KeyState {
  /** Calls parked behind this key, for inspection. */
  readonly waiting: number
}

/**
 * Everything coordination keeps for one runtime: the peer index and the
 * per-key state of stateful strategies. Both only hold keys that have a live
 * task, so memory follows live keys, never keys seen. The claim's hooks
 * (`settled`, `exited`) are told of every call the handler decided: nothing
 * is registered per call.
 */
export class CoordinationScope {
  readonly host: PluginHost
  /** hash → its live coordinated tasks, in the order they reached a coordinator. */
  private readonly keys = new Map<string, KeyPeers>()
  /** Tracked tasks that have not settled yet (inspection). */
  private tracked = 0
  /** store owner (one per stateful coordinator) → hash → state. */
  readonly stores: Map<object, Map<string, KeyState>> = new Map()
  /**
   * Intents a coordinator of the protocol left undecided (parked, or with a
   * pending answer), and what to do should they end so. Few calls are here:
   * the built-ins decide at once.
   */
  private readonly undecided = new Map<Task<unknown>, () => void>()
  /** Intents a built-in decided for a coordinator that delegated to it: their exit is the built-in's. */
  private readonly delegated = new Map<Task<unknown>, Strategy>()

  constructor(host: PluginHost) {
    this.host = host
  }

  /**
   * Indexes `task` under its binding's hash: every call the handler is asked
   * to decide, from then until it settles (see {@link settled}).
   */
  track(binding: CoordinationBinding, task: Task<unknown>): void {
    const peers = this.entryOf(binding)
    if (peers === undefined) {
      const created = new KeyPeers(this, task)
      this.keys.set(binding.hash, created)
      binding.peers = created
    } else peers.add(task)
    this.tracked++
  }

  /** Calls `ended` if `task` ends while undecided (at once if it already has). */
  whenEndsUndecided(task: Task<unknown>, ended: () => void): void {
    if (isTerminalState(task.state)) ended()
    else this.undecided.set(task, ended)
  }

  /** A built-in decided `task` for the coordinator bound to it: its exit goes to `strategy`. */
  delegate(task: Task<unknown>, strategy: Strategy): void {
    this.delegated.set(task, strategy)
  }

  /** The claim's `onSettled`: `task`, which the handler decided, ended. */
  settled(task: Task<unknown>, binding: CoordinationBinding): void {
    this.tracked--
    const peers = this.entryOf(binding)!
    if (peers.remove(task)) this.keys.delete(binding.hash)
    if (binding.leading === task) binding.leading = undefined
    if (this.undecided.size === 0) return
    const ended = this.undecided.get(task)
    if (ended === undefined) return
    this.undecided.delete(task)
    ended()
  }

  /** The claim's `onExited`: `task` ended and its body has left; the strategy that decided it is told. */
  exited(task: Task<unknown>, binding: CoordinationBinding): void {
    let strategy = binding.strategy
    if (this.delegated.size !== 0) {
      const delegate = this.delegated.get(task)
      if (delegate !== undefined) {
        this.delegated.delete(task)
        strategy = delegate
      }
    }
    strategy?.exited?.(this, task, binding)
  }

  /** The earliest live task of `binding`'s key, without building the peers array. */
  firstOf(binding: CoordinationBinding): Task<unknown> | undefined {
    return this.entryOf(binding)?.first
  }

  /** The other live tasks of `binding`'s key, earliest first. */
  peersOf(binding: CoordinationBinding, intent: Task<unknown>): Task<unknown>[] {
    const peers: Task<unknown>[] = []
    this.entryOf(binding)?.collectLive(peers, intent)
    return peers
  }

  /** The index's entry for `binding`'s key: the one the binding remembers while it is this scope's and live, else looked up (and remembered). */
  private entryOf(binding: CoordinationBinding): KeyPeers | undefined {
    const remembered = binding.peers
    if (remembered !== undefined && remembered.scope === this) return remembered
    const peers = this.keys.get(binding.hash)
    if (peers !== undefined) binding.peers = peers
    return peers
  }

  sizes(): { keys: number; tasks: number } {
    return { keys: this.keys.size, tasks: this.tracked }
  }
}

/**
 * One live key of the peer index: its earliest live task, and the ones after
 * it in order. A later task that settles is not searched for: it is counted
 * out and skipped when the front reaches it, and the list is rebuilt once
 * most of it is settled, so a key with a thousand waiters costs O(1) per
 * call and per settle, and never holds more than about twice its live tasks.
 */
export class KeyPeers {
  /** The scope whose index holds this entry; `undefined` once its last task has settled and it left the index. */
  scope: CoordinationScope | undefined
  first: Task<unknown> | undefined
  private later: (Task<unknown> | undefined)[] | undefined = undefined
  private head = 0
  /** Tasks in `later` that have neither settled nor moved to the front. */
  private laterLive = 0

  constructor(scope: CoordinationScope, first: Task<unknown>) {
    this.scope = scope
    this.first = first
  }

  add(task: Task<unknown>): void {
    ;(this.later ??= []).push(task)
    this.laterLive++
  }

  /** `task` settled; returns true when the key has no live task left. */
  remove(task: Task<unknown>): boolean {
    if (task !== this.first) {
      this.laterLive--
      this.compact()
      return false
    }
    // The next earliest moves to the front.
    this.first = this.takeEarliest()
    if (this.first !== undefined) return false
    this.scope = undefined
    return true
  }

  /** Appends the live tasks but `except` to `into`, earliest first. */
  collectLive(into: Task<unknown>[], except: Task<unknown> | undefined): void {
    const first = this.first
    if (first !== undefined && first !== except) into.push(first)
    const later = this.later
    if (later === undefined) return
    for (let i = this.head; i < later.length; i++) {
      const task = later[i]!
      if (task !== except && !isTerminalState(task.state)) into.push(task)
    }
  }

  private takeEarliest(): Task<unknown> | undefined {
    const later = this.later
    if (later === undefined) return undefined
    while (this.head < later.length) {
      const task = later[this.head]!
      later[this.head] = undefined
      this.head++
      if (!isTerminalState(task.state)) {
        this.laterLive--
        return task
      }
    }
    this.later = undefined
    this.head = 0
    return undefined
  }

  private compact(): void {
    const later = this.later
    if (later === undefined) return
    const held = later.length - this.head
    if (this.laterLive === 0) {
      this.later = undefined
      this.head = 0
    } else if (held > 32 && held > 2 * this.laterLive) {
      const kept: Task<unknown>[] = []
      for (let i = this.head; i < later.length; i++) {
        const task = later[i]!
        if (!isTerminalState(task.state)) kept.push(task)
      }
      this.later = kept
      this.head = 0
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
