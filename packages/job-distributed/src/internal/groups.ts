/**
 * Members grouped by a key in a `Map` of `Set`s (waiters by key, leases by
 * task): a group exists only while it has a member.
 *
 * @example
 * ```ts
 * const byKey = new Map<string, Set<number>>()
 * joinGroup(byKey, 'k', 1)
 * leaveGroup(byKey, 'k', 1) // byKey.size === 0
 * ```
 */
export function joinGroup<K, V>(groups: Map<K, Set<V>>, key: K, member: V): void {
  let group = groups.get(key)
  if (group === undefined) {
    group = new Set()
    groups.set(key, group)
  }
  group.add(member)
}

/**
 * Takes `member` out of its group. The last member drops the group whole:
 * emptying a `Set` first makes V8 shrink its table, an allocation on every
 * call of the hot path.
 */
export function leaveGroup<K, V>(groups: Map<K, Set<V>>, key: K, member: V): void {
  const group = groups.get(key)
  if (group === undefined || !group.has(member)) return
  if (group.size === 1) groups.delete(key)
  else group.delete(member)
}
