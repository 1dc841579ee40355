import type { WireEvent } from './protocol-events.js'
import { PROTOCOL_NAME } from './version.js'

/**
 * Who produced an envelope: the runtime's name and the producing library
 * with its version (`'@vega/job-devtools-protocol@1.0.0'`).
 *
 * @example
 * ```ts
 * const src: EnvelopeSource = { runtime: 'app', lib: '@vega/job-devtools-protocol@1.0.0' }
 * ```
 */
export interface EnvelopeSource {
  readonly runtime: string
  readonly lib: string
}

/**
 * The v1 wire envelope: one event of one session, numbered. `seq` starts at 1
 * per `sid` and grows by one; a loss is announced by `session:gap`, never
 * silent. `v` is the major version only (the minor is in `session:hello`).
 *
 * @example
 * ```ts
 * const envelope: Envelope = {
 *   proto: 'vega-job', v: 1, sid: 's1', seq: 1, ts: 0,
 *   src: { runtime: 'app', lib: '@vega/job-devtools-protocol@1.0.0' },
 *   e: { type: 'session:hello', minor: 0, capabilities: [] },
 * }
 * ```
 */
export interface Envelope<E extends { readonly type: string } = WireEvent> {
  readonly proto: 'vega-job'
  readonly v: 1
  /** Session id: one per connected runtime. */
  readonly sid: string
  /** 1, 2, 3 … per `sid`. */
  readonly seq: number
  /** Epoch ms when the envelope was built. */
  readonly ts: number
  readonly src: EnvelopeSource
  readonly e: E
}

/**
 * Whether `value` looks like a v1 envelope: the right `proto` and `v`, a
 * string `sid`, a positive integer `seq`, a finite `ts`, a `src` object and
 * an event with a string `type`. Other fields are not inspected, so a newer
 * minor's additions pass.
 *
 * @example
 * ```ts
 * const parsed: unknown = JSON.parse(line)
 * if (isEnvelope(parsed)) state = reduce(state, parsed)
 * ```
 */
export function isEnvelope(value: unknown): value is Envelope {
  if (typeof value !== 'object' || value === null) return false
  const candidate = value as Partial<Record<keyof Envelope, unknown>>
  const e = candidate.e as { type?: unknown } | null | undefined
  return (
    candidate.proto === PROTOCOL_NAME &&
    candidate.v === 1 &&
    typeof candidate.sid === 'string' &&
    typeof candidate.seq === 'number' &&
    Number.isInteger(candidate.seq) &&
    candidate.seq >= 1 &&
    typeof candidate.ts === 'number' &&
    Number.isFinite(candidate.ts) &&
    typeof candidate.src === 'object' &&
    candidate.src !== null &&
    typeof e === 'object' &&
    e !== null &&
    typeof e.type === 'string'
  )
}
