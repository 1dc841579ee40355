import {
  createTraceState,
  isSpanContextValid,
  type SpanContext,
  TraceFlags,
} from '@opentelemetry/api'

/**
 * A span context as W3C Trace Context headers (`traceparent`, `tracestate`),
 * the form it travels in inside a bus message. Written and read here rather
 * than through the global propagator: the bus always carries W3C context,
 * whatever propagator the application registered (or none).
 */
export interface TraceCarrier {
  readonly traceparent: string
  readonly tracestate?: string
}

// version 00: exactly four fields; a later version may append more after a dash.
const TRACEPARENT = /^([0-9a-f]{2})-([0-9a-f]{32})-([0-9a-f]{16})-([0-9a-f]{2})(-.*)?$/

export function toCarrier(spanContext: SpanContext): TraceCarrier | undefined {
  if (!isSpanContextValid(spanContext)) return undefined
  const flags = (spanContext.traceFlags & 0xff).toString(16).padStart(2, '0')
  const traceparent = `00-${spanContext.traceId}-${spanContext.spanId}-${flags}`
  const tracestate = spanContext.traceState?.serialize()
  return tracestate === undefined || tracestate === ''
    ? { traceparent }
    : { traceparent, tracestate }
}

/** The remote span context a carrier names, or `undefined` for anything malformed. */
export function fromCarrier(carrier: unknown): SpanContext | undefined {
  if (typeof carrier !== 'object' || carrier === null) return undefined
  const { traceparent, tracestate } = carrier as { traceparent?: unknown; tracestate?: unknown }
  if (typeof traceparent !== 'string') return undefined
  const match = TRACEPARENT.exec(traceparent.trim())
  if (match === null) return undefined
  const [, version, traceId, spanId, flags, rest] = match
  if (version === 'ff' || (version === '00' && rest !== undefined)) return undefined
  const spanContext: SpanContext = {
    traceId: traceId!,
    spanId: spanId!,
    traceFlags: Number.parseInt(flags!, 16) & TraceFlags.SAMPLED,
    isRemote: true,
  }
  if (typeof tracestate === 'string' && tracestate !== '') {
    spanContext.traceState = createTraceState(tracestate)
  }
  return isSpanContextValid(spanContext) ? spanContext : undefined
}
