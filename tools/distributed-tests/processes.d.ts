import type { ChildProcess } from 'node:child_process'

export interface Message {
  t: string
  n?: number
  at?: number
  [field: string]: unknown
}

export interface CallSpec {
  strategy: 'dedupe' | 'restart' | 'serialize' | 'serialize2' | 'exhaust' | 'keepLatest'
  key: string
  bodyMs: number
  value?: unknown
  fence?: boolean
  ignoreSignal?: boolean
  assertAtEnd?: boolean
  /** The body holds until {@link Worker.open} (bodyMs is ignored). */
  gated?: boolean
}

/** A forked Node process with one runtime, driven over IPC; every message it sent is kept. */
export class Worker {
  readonly child: ChildProcess
  readonly messages: Message[]
  /** The numbers of the calls it issued as it started (see {@link WorkerInit.boot}). */
  readonly bootCalls: number[]
  constructor(child: ChildProcess)
  get pid(): number
  /** Resolves with the first message (already received, from `from` on, or coming) that matches. */
  waitFor(
    match: (message: Message) => boolean,
    ms: number,
    what: string,
    from?: number,
  ): Promise<Message>
  /** Starts a coordinated call; returns its number (messages about it carry `n`). */
  call(spec: CallSpec): number
  settled(n: number, ms: number): Promise<Message>
  entered(n: number, ms: number): Promise<Message>
  /** Lets a gated body end. */
  open(n: number): void
  /** Its coordination's counters right now (floor re-checks, floor wake-ups). */
  counters(): Promise<{ floorRechecks: number; floorWakeUps: number }>
  of(kind: string): Message[]
  /** The last message of `kind` it sent, if any. */
  latest(kind: string): Message | undefined
  /** Sends a command over IPC. */
  send(message: object): void
  /** Shuts its runtime down and resolves with what it kept then, once it exited. */
  stop(): Promise<Message | undefined>
  kill(signal: NodeJS.Signals): void
}

/** Calls a worker issues in the tick that made its engine (before its client is ready). */
export interface BootCalls {
  readonly spec: CallSpec
  readonly count: number
}

/** What each worker's `connect` gets, beside the engine's own fields (url, prefix or schema, …). */
export interface WorkerInit {
  leaseMs: number
  connectTimeoutMs?: number
  /** Calls each worker issues as it starts, numbered in {@link Worker.bootCalls}. */
  boot?: BootCalls
  [field: string]: unknown
}

/** Forks `count` processes of `script` (an engine's child, serving worker-child.mjs) and resolves once each connected with `init`. */
export function startWorkers(script: string, count: number, init: WorkerInit): Promise<Worker[]>

/** Body intervals from every worker, sorted by entry. */
export function intervals(
  workers: Worker[],
  ns?: ReadonlySet<number>,
): { n: number; from: number; to: number }[]

/** The most bodies inside at once. */
export function maxOverlap(list: { from: number; to: number }[]): number

/** Registers the table of the strategies across 4 of an engine's processes. */
export function describeAcrossProcesses(options: {
  readonly title: string
  readonly lease: number
  /** 4 workers on a fresh namespace. */
  readonly start: () => Promise<Worker[]>
  /** Checks the storage once every worker shut down. */
  readonly nothingLeft: () => Promise<void>
}): void

/** Registers the faults of a holder that dies or stops. */
export function describeHolderFaults(options: {
  readonly title: string
  readonly lease: number
  /** That many workers on a fresh namespace (the caller kills them after the file). */
  readonly workersOn: (count: number) => Promise<Worker[]>
}): void
