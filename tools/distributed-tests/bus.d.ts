/** What a bus test needs of an engine's bus (both engines' buses have this shape). */
export interface AnyBus {
  send(message: { aggregate: string; id: string; body: unknown }): Promise<{
    partition: number
    entryId: string
  }>
  // biome-ignore lint/suspicious/noExplicitAny: each engine types its consume and deadLetters; the suite only drives them.
  consume(aggregate: string, handler: (...args: any[]) => unknown, options?: object): any
  // biome-ignore lint/suspicious/noExplicitAny: as above.
  deadLetters(aggregate: string, count?: number): Promise<any[]>
}

/** A bus on a fresh namespace (a Redis prefix, a Postgres schema), and how to close what it opened. */
export interface BusSetupBase {
  readonly bus: AnyBus
  close(): void | Promise<void>
}

/** Options a test asks its bus for (the engine's defaults: 8 partitions, a 600 ms lease). */
export interface BusTestOptions {
  partitions?: number
  leaseMs?: number
}

/** One delivery as a handler gets it (the fields the suite reads). */
export interface DeliveryFacts {
  readonly id: string
  readonly partition: number
  readonly fence: number
  readonly consumerId: string
  readonly attempt: number
  readonly body: { seq: number }
}

export interface Handled {
  readonly id: string
  readonly seq: number
  readonly attempt: number
  readonly fence: number
  readonly consumerId: string
}

/** Polls `check` every 10 ms until it holds, or fails naming `what` after `ms`. */
export function eventually(
  check: () => boolean | Promise<boolean>,
  ms: number,
  what: string,
): Promise<void>

/** A gate a handler waits on until the test opens it. */
export function gated(): { gate: Promise<void>; open: () => void }

/** Sends `perId` messages to each of `ids`, bodies { seq }, round-robin over ids, in order per id. */
export function sendAll(
  bus: AnyBus,
  aggregate: string,
  ids: readonly string[],
  perId: number,
): Promise<void>

/** A handler that records each delivery and notes when another handler of its id is inside. */
export function recorder(): {
  handled: Handled[]
  overlaps: string[]
  /** The most handlers inside at once. */
  readonly maxInside: number
  handle: (delivery: DeliveryFacts) => Promise<void>
}

/** Registers the bus's facts for one engine. */
export function describeBusFacts<S extends BusSetupBase>(options: {
  /** The factory, first in every describe block: `createRedisAggregateBus`. */
  readonly title: string
  /** Where it runs, when an engine runs the facts on several targets: `one primary`. */
  readonly where?: string
  /** A bus on a fresh namespace. */
  readonly setup: (options?: BusTestOptions) => S
  /** A graceful handover's partitions reach the others within this (ms). */
  readonly handoverWithinMs: number
  /** The churn test's size: messages per id, and the progress between two membership changes. */
  readonly churn: { readonly perId: number; readonly step: number }
  /** Checks that the message of `receipt` is kept as sent, in its partition. */
  readonly storedAsSent: (
    setup: S,
    receipt: { partition: number; entryId: string },
  ) => Promise<void>
  /** Stores a message of `id` (in `partition`) whose body the codec cannot decode, first in its id's line. */
  readonly sendUndecodable: (
    setup: S,
    aggregate: string,
    id: string,
    partition: number,
  ) => Promise<void>
  /** Makes another consumer the owner of the partition, with a newer fence. */
  readonly takePartition: (setup: S, aggregate: string, partition: number) => Promise<void>
  /** How many messages the partition still keeps for its next owner. */
  readonly kept: (setup: S, aggregate: string, partition: number) => Promise<number>
  /** After a handover, once the next consumer handled what was left: the storage's view of it. */
  readonly afterHandover?: (setup: S, aggregate: string, next: { id: string }) => Promise<void>
  /** Checks that no lease, member or read position is held any more. */
  readonly nothingHeld: (setup: S, aggregate: string, partitions: number) => Promise<void>
  /** Checks that only the partitions' fences are left, once every consumer stopped. */
  readonly onlyFencesLeft: (setup: S, aggregate: string, partitions: number) => Promise<void>
}): void

/** Consumers join and leave while messages flow; every handler asks the storage for its lease. */
export function ownershipFact<S extends BusSetupBase>(options: {
  readonly setup: (options?: BusTestOptions) => S
  /** Where an id belongs (`toGroupKey`). */
  readonly partitionOf: (id: string, partitions: number) => number
  /** Undefined when the partition's lease is the delivery's consumer's, under its fence; else what is wrong. */
  readonly leaseViolation: (
    setup: S,
    aggregate: string,
    delivery: DeliveryFacts,
  ) => Promise<string | undefined>
}): Promise<void>

/** Registers the bad-input checks every engine's bus makes before touching its storage. */
export function describeBusBadInput(options: {
  /** The factory: `createRedisAggregateBus`. */
  readonly title: string
  /** What it must not touch: `Redis`. */
  readonly storage: string
  /** A thunk making a bus with valid options and these over them (a bad one throws when called). */
  readonly make: (options: Record<string, unknown>) => () => AnyBus
  /** A bus whose consumers may start (a fresh namespace). */
  readonly fresh: () => AnyBus
}): void
