import { isTerminalState, type PluginHost, type Runtime, type Task } from '@vega/job-core'
import type { CoordinationBinding } from './coordination-tag.js'
import type { Strategy } from './strategy.js'

/** Per-key state a strategy keeps (a serialize or keepLatest lane). */
export interface KeyState {
  /** Calls parked behind this key, for inspection. */
  readonly waiting: number
  /** Appends the live calls this state holds (admitted or waiting), in any order. */
  collectLive(into: Task<unknown>[]): void
}

/**
 * Everything coordination keeps for one runtime: the peer index and the
 * per-key state of stateful strategies. Both only hold keys that have a live
 * task, so memory follows live keys, never keys seen. The claim's hooks
 * (`settled`, `exited`) are told of every call the handler decided: nothing
 * is registered per call.
 *
 * The peers of a call are every live call of its key, whatever their
 * strategy. A strategy whose per-key state already lists its calls (the
 * lanes of serialize and keepLatest: `Strategy.listsItsCalls`) keeps them
 * out of the index, so a key only they use costs no index entry: the
 * index holds the other calls, and a read of a key's peers adds what the
 * key's states hold ({@link firstOf}, {@link peersOf}).
 */
export class CoordinationScope {
  readonly host: PluginHost
  /** hash → its live indexed calls, in the order they reached a coordinator. */
  private readonly keys = new Map<string, KeyPeers>()
  /** Calls the handler decided that have not settled yet (inspection). */
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
   * Counts `task` in, every call the handler is asked to decide, and indexes
   * it under its binding's hash unless its strategy lists its own calls
   * (see {@link isIndexed}); until it settles (see {@link settled}).
   */
  track(binding: CoordinationBinding, task: Task<unknown>): void {
    this.tracked++
    if (!isIndexed(binding)) return
    const peers = this.entryOf(binding)
    if (peers === undefined) {
      const created = new KeyPeers(this, task)
      this.keys.set(binding.hash, created)
      binding.peers = created
    } else peers.add(task)
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
    if (isIndexed(binding)) {
      const peers = this.entryOf(binding)!
      if (peers.remove(task)) this.keys.delete(binding.hash)
    }
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

  /**
   * The earliest live call of `binding`'s key other than `intent`, without
   * building the peers array: what dedupe follows and exhaust defers to.
   */
  firstOf(
    binding: CoordinationBinding,
    intent: Task<unknown> | undefined,
  ): Task<unknown> | undefined {
    // The index holds its calls earliest first, `intent` (when indexed) last.
    const indexed = this.entryOf(binding)?.first
    const first = indexed === intent ? undefined : indexed
    if (this.stores.size === 0) return first
    const held = this.heldBy(binding.hash, intent)
    if (held === undefined) return first
    if (first !== undefined) held.push(first)
    return held.sort(byCallOrder)[0]
  }

  /** The other live calls of `binding`'s key, earliest first. */
  peersOf(binding: CoordinationBinding, intent: Task<unknown>): Task<unknown>[] {
    const peers: Task<unknown>[] = []
    this.entryOf(binding)?.collectLive(peers, intent)
    if (this.stores.size === 0) return peers
    const held = this.heldBy(binding.hash, intent)
    if (held === undefined) return peers
    // A call a coordinator of one's own handed to a lane is both indexed and held.
    return [...new Set([...peers, ...held])].sort(byCallOrder)
  }

  /** The live calls of `hash` the strategies' per-key states hold, but `intent`; `undefined` for none. */
  private heldBy(hash: string, intent: Task<unknown> | undefined): Task<unknown>[] | undefined {
    let held: Task<unknown>[] | undefined
    for (const states of this.stores.values()) {
      const state = states.get(hash)
      if (state === undefined) continue
      held ??= []
      state.collectLive(held)
    }
    if (held === undefined || intent === undefined) return held
    const others = held.filter((task) => task !== intent)
    return others.length === 0 ? undefined : others
  }

  /** The index's entry for `binding`'s key: the one the binding remembers while it is this scope's and live, else looked up (and remembered). */
  private entryOf(binding: CoordinationBinding): KeyPeers | undefined {
    const remembered = binding.peers
    if (remembered !== undefined && remembered.scope === this) return remembered
    const peers = this.keys.get(binding.hash)
    if (peers !== undefined) binding.peers = peers
    return peers
  }

  /** Keys with a live call (indexed, or held by a strategy's state), and calls not settled yet. */
  sizes(): { keys: number; tasks: number } {
    const keys = new Set(this.keys.keys())
    for (const states of this.stores.values()) {
      for (const [hash, state] of states) {
        const live: Task<unknown>[] = []
        state.collectLive(live)
        if (live.length !== 0) keys.add(hash)
      }
    }
    return { keys: keys.size, tasks: this.tracked }
  }
}

/** Whether calls of `binding` go in the index: unless its strategy's per-key state lists them. */
function isIndexed(binding: CoordinationBinding): boolean {
  return binding.strategy?.listsItsCalls !== true
}

/** Earliest first: task ids follow the order calls were made. */
function byCallOrder(a: Task<unknown>, b: Task<unknown>): number {
  return a.id - b.id
}

/**
 * One live key of the peer index: its earliest live task, and the ones after
 * it in order. A later task that settles is not searched for: it is counted
 * out and skipped when the front reaches it, and the list is rebuilt once
 * most of it is settled, so a key with a thousand waiters costs O(1) per
 * call and per settle, and never holds more than about twice its live tasks.
 *
 * The entry stays in the index until every task it took in has been
 * removed (its settle hook ran), not only until none is live: a task has
 * ended before its settle hook runs, and a listener of that ending may end
 * the others, so the front can find no live task while the ended one has
 * still to be removed, and its removal must find this entry.
 */
export class KeyPeers {
  /** The scope whose index holds this entry; `undefined` once its last task was removed and it left the index. */
  scope: CoordinationScope | undefined
  /** The earliest live task; `undefined` while only ended tasks wait for their removal. */
  first: Task<unknown> | undefined
  /** Tasks taken in and not removed yet. */
  private members = 1
  private later: (Task<unknown> | undefined)[] | undefined = undefined
  private head = 0
  /** Tasks in `later` that have neither settled nor moved to the front. */
  private laterLive = 0

  constructor(scope: CoordinationScope, first: Task<unknown>) {
    this.scope = scope
    this.first = first
  }

  add(task: Task<unknown>): void {
    this.members++
    if (this.first === undefined) {
      this.first = task
      return
    }
    ;(this.later ??= []).push(task)
    this.laterLive++
  }

  /** `task` settled; returns true when every task taken in has been removed. */
  remove(task: Task<unknown>): boolean {
    this.members--
    if (task !== this.first) {
      this.laterLive--
      this.compact()
    } else {
      // The next earliest moves to the front.
      this.first = this.takeEarliest()
    }
    if (this.members !== 0) return false
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
