import type { AggregateExchange, AggregateId } from '../src/index.js'

export interface Gate<T = void> {
  readonly promise: Promise<T>
  open(value: T): void
  fail(error: unknown): void
}

/** A promise the test settles by hand. */
export function gate<T = void>(): Gate<T> {
  let open!: (value: T) => void
  let fail!: (error: unknown) => void
  const promise = new Promise<T>((resolve, reject) => {
    open = resolve
    fail = reject
  })
  return { promise, open, fail }
}

/** Lets every pending promise callback and one macrotask run. */
export function flush(): Promise<void> {
  return new Promise((resolve) => setImmediate(resolve))
}

export async function flushTimes(n: number): Promise<void> {
  for (let i = 0; i < n; i++) await flush()
}

export interface TestExchange extends AggregateExchange {
  readonly seq: number
}

export function orderId(id: string, aggregateName = 'Order'): AggregateId {
  return { contextName: 'sales', aggregateName, id }
}

export function exchange(id: string, seq: number, aggregateName = 'Order'): TestExchange {
  return { aggregateId: orderId(id, aggregateName), seq }
}

/** A promise that never settles: Node's stand-in for a blocking hook. */
export function never(): Promise<never> {
  return new Promise<never>(() => {})
}
