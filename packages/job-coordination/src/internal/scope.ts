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
   * hash → its live coordinated tasks (in the order they reached a
   * coordinator). The entry's own settle callback serves every task of the
   * key, so a tracked task costs no map entry or closure of its own.
   */
  private readonly keys = new Map<string, KeyPeers>()
  /** Tracked tasks that have not settled yet (inspection). */
  private tracked = 0
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
    let peers = this.keys.get(hash)
    if (peers === undefined) {
      peers = new KeyPeers(this, hash, task)
      this.keys.set(hash, peers)
    } else peers.add(task)
    // A call that leads its key through a binding dedupe remembers (`leading`)
    // hands that binding to the key, which clears it when the task settles.
    if (binding.leading === task) peers.leadBinding = binding
    this.tracked++
    // Core runs settle callbacks in the order they were added: the index is left first.
    this.host.onSettled(task, peers.settled)
    if (onSettled !== undefined) this.host.onSettled(task, onSettled)
  }

  /** The earliest live task with `hash`, without building the peers array. */
  firstOf(hash: string): Task<unknown> | undefined {
    return this.keys.get(hash)?.first
  }

  /** The other live tasks with `hash`, earliest first. */
  peersOf(hash: string, intent: Task<unknown>): Task<unknown>[] {
    const peers: Task<unknown>[] = []
    this.keys.get(hash)?.collectLive(peers, intent)
    return peers
  }

  sizes(): { keys: number; tasks: number } {
    return { keys: this.keys.size, tasks: this.tracked }
  }

  /** A tracked task of `peers` settled (its key's settle callback). */
  left(peers: KeyPeers, task: Task<unknown>): void {
    this.tracked--
    // An entry already replaced (its key emptied and came back) is not the one to delete.
    if (peers.remove(task) && this.keys.get(peers.hash) === peers) this.keys.delete(peers.hash)
  }
}

/**
 * One live key of the peer index: its earliest live task, and the ones after
 * it in order. A later task that settles is not searched for: it is counted
 * out and skipped when the front reaches it, and the list is rebuilt once
 * most of it is settled, so a key with a thousand waiters costs O(1) per
 * call and per settle, and never holds more than about twice its live tasks.
 */
class KeyPeers {
  readonly hash: string
  first: Task<unknown> | undefined
  /** The binding whose `leading` names `first`, cleared with it. */
  leadBinding: CoordinationBinding | undefined = undefined
  private later: (Task<unknown> | undefined)[] | undefined = undefined
  private head = 0
  /** Tasks in `later` that have neither settled nor moved to the front. */
  private laterLive = 0
  /** One callback for every task of the key: core hands it the task. */
  readonly settled: (task: Task<unknown>) => void

  constructor(scope: CoordinationScope, hash: string, first: Task<unknown>) {
    this.hash = hash
    this.first = first
    this.settled = (task) => scope.left(this, task)
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
    const lead = this.leadBinding
    if (lead !== undefined) {
      this.leadBinding = undefined
      if (lead.leading === task) lead.leading = undefined
    }
    // The next earliest moves to the front.
    this.first = this.takeEarliest()
    return this.first === undefined
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
