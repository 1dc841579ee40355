/**
 * A memo of a lookup by `(contextName, aggregateName)`: two nested maps, so a
 * hit reads two properties and two maps instead of building the
 * `context\u001fAggregate` string key for every exchange. It only remembers
 * what the keyed lookup answered, so it can never disagree with it; callers
 * clear it whenever the keyed map forgets something.
 */
export class NamedMemo<V> {
  private readonly byContext = new Map<string, Map<string, V>>()

  get(contextName: unknown, aggregateName: unknown): V | undefined {
    // Only strings are remembered: any other value keeps the keyed lookup,
    // with its validation and its string coercion.
    if (typeof contextName !== 'string' || typeof aggregateName !== 'string') return undefined
    return this.byContext.get(contextName)?.get(aggregateName)
  }

  set(contextName: unknown, aggregateName: unknown, value: V): void {
    if (typeof contextName !== 'string' || typeof aggregateName !== 'string') return
    let byName = this.byContext.get(contextName)
    if (byName === undefined) {
      byName = new Map<string, V>()
      this.byContext.set(contextName, byName)
    }
    byName.set(aggregateName, value)
  }

  clear(): void {
    this.byContext.clear()
  }
}
