import type { CoordinationScope, KeyState } from './scope.js'

/**
 * Per-runtime, per-key state of one stateful coordinator. The state lives in
 * the runtime's scope (so `inspectCoordination` sees it); the store remembers
 * only the scopes that currently hold some, so `dispose()` can reach every
 * waiter and a coordinator that served many runtimes keeps none of them alive.
 */
export class KeyedStore<S extends KeyState> {
  private readonly live = new Set<CoordinationScope>()

  get(scope: CoordinationScope, hash: string): S | undefined {
    return scope.stores.get(this)?.get(hash) as S | undefined
  }

  set(scope: CoordinationScope, hash: string, state: S): void {
    let states = scope.stores.get(this)
    if (states === undefined) {
      states = new Map()
      scope.stores.set(this, states)
      this.live.add(scope)
    }
    states.set(hash, state)
  }

  /** Deletes `state` if it is still the current one for `hash`. */
  delete(scope: CoordinationScope, hash: string, state: S): void {
    const states = scope.stores.get(this)
    if (states === undefined || states.get(hash) !== state) return
    states.delete(hash)
    if (states.size === 0) {
      scope.stores.delete(this)
      this.live.delete(scope)
    }
  }

  /** Every state of `scope` (or of all scopes), as a snapshot safe to delete from while iterating. */
  values(scope?: CoordinationScope): S[] {
    const targets = scope === undefined ? [...this.live] : this.live.has(scope) ? [scope] : []
    const found: S[] = []
    for (const target of targets) {
      const states = target.stores.get(this)
      if (states !== undefined) for (const state of states.values()) found.push(state as S)
    }
    return found
  }
}
