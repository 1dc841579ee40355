/**
 * Up to this parallelism the table keeps an array slot per group key (one
 * array element each); above it, lookups go to the map.
 */
export const DENSE_GROUP_KEYS: number = 1 << 14

/**
 * The live groups of a dispatcher (or of the job-runtime backend) by group
 * key, an integer in `[0, parallelism)`. Every admission looks its group up,
 * so for a parallelism up to {@link DENSE_GROUP_KEYS} that is a read of an
 * array slot, as in a hand-written pump, rather than a hash-map lookup. The
 * groups are also kept in a map, only written when a group comes or goes:
 * its insertion order is the order in which idle groups are started, and it
 * serves keys beyond the array.
 */
export class GroupTable<G> {
  private readonly slots: (G | undefined)[] | undefined
  private readonly byKey = new Map<number, G>()

  constructor(parallelism: number) {
    this.slots =
      parallelism <= DENSE_GROUP_KEYS
        ? new Array<G | undefined>(parallelism).fill(undefined)
        : undefined
  }

  /** Groups alive now. */
  get size(): number {
    return this.byKey.size
  }

  get(key: number): G | undefined {
    const slots = this.slots
    return slots === undefined ? this.byKey.get(key) : slots[key]
  }

  /** Adds a group under a key that has none. */
  set(key: number, group: G): void {
    this.byKey.set(key, group)
    if (this.slots !== undefined) this.slots[key] = group
  }

  delete(key: number): void {
    this.byKey.delete(key)
    if (this.slots !== undefined) this.slots[key] = undefined
  }

  clear(): void {
    this.byKey.clear()
    this.slots?.fill(undefined)
  }

  /** The groups in the order they came. */
  values(): IterableIterator<G> {
    return this.byKey.values()
  }
}
