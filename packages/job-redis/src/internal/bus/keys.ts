/** The keys of one aggregate's bus; the Lua scripts derive the same names from `base`. */
export class BusKeys {
  readonly base: string
  readonly members: string
  readonly ctl: string
  readonly dead: string

  constructor(prefix: string, aggregate: string) {
    this.base = `${prefix}:bus:${aggregate}`
    this.members = `${this.base}:members`
    this.ctl = `${this.base}:ctl`
    this.dead = `${this.base}:dead`
  }

  stream(partition: number): string {
    return `${this.base}:p:${partition}`
  }

  own(partition: number): string {
    return `${this.base}:own:${partition}`
  }

  fence(partition: number): string {
    return `${this.base}:fence:${partition}`
  }
}

/** The consumer group every consumer of a bus reads through. */
export const GROUP: string = 'vj'

/** Fence counters outlive every lease by far; refreshed at each grant. */
export const FENCE_TTL_MS: number = 24 * 60 * 60 * 1000
