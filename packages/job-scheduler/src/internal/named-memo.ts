/**
 * A memo of a lookup by `(contextName, aggregateName)`: two nested maps, so a
 * hit reads two properties and two maps instead of building the
 * `context\u001fAggregate` string key for every exchange. It only remembers
 * what the keyed lookup answered, so it can never disagree with it; callers
 * clear it whenever the keyed map forgets something.
 */
export class NamedMemo<V> {
  private readonly byContext = new Map<string, Map<string, V>>()
  // The last hit: traffic is usually one aggregate type at a time, and two
  // string comparisons (often of the same string objects) beat two map reads.
  private lastContext: string | undefined = undefined
  private lastName: string | undefined = undefined
  private lastValue: V | undefined = undefined

  get(contextName: unknown, aggregateName: unknown): V | undefined {
    // Only strings are remembered: any other value keeps the keyed lookup,
    // with its validation and its string coercion.
    if (typeof contextName !== 'string' || typeof aggregateName !== 'string') return undefined
    if (contextName === this.lastContext && aggregateName === this.lastName) return this.lastValue
    const value = this.byContext.get(contextName)?.get(aggregateName)
    if (value !== undefined) {
      this.lastContext = contextName
      this.lastName = aggregateName
      this.lastValue = value
    }
    return value
  }

  set(contextName: unknown, aggregateName: unknown, value: V): void {
    if (typeof contextName !== 'string' || typeof aggregateName !== 'string') return
    let byName = this.byContext.get(contextName)
    if (byName === undefined) {
      byName = new Map<string, V>()
      this.byContext.set(contextName, byName)
    }
    byName.set(aggregateName, value)
    this.lastContext = contextName
    this.lastName = aggregateName
    this.lastValue = value
  }

  clear(): void {
    this.byContext.clear()
    this.lastContext = undefined
    this.lastName = undefined
    this.lastValue = undefined
  }
}
