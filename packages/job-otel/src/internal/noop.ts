import {
  createNoopMeter,
  type Meter,
  ProxyTracer,
  ProxyTracerProvider,
  type Tracer,
  trace,
} from '@opentelemetry/api'
import { SCOPE } from './names.js'

const NOOP_METER_TYPE = createNoopMeter().constructor

/**
 * Whether `tracer` is the API's stand-in with no SDK behind it: a proxy
 * tracer while no global TracerProvider is registered. Only that case is
 * recognised; any other tracer counts as real (tracing it costs, never
 * loses spans).
 */
export function isNoopTracer(tracer: Tracer): boolean {
  if (!(tracer instanceof ProxyTracer)) return false
  const provider = trace.getTracerProvider()
  return provider instanceof ProxyTracerProvider && provider.getDelegateTracer(SCOPE) === undefined
}

/** Whether `meter` is the API's no-op meter (what `metrics.getMeter` gives with no MeterProvider). */
export function isNoopMeter(meter: Meter): boolean {
  return meter.constructor === NOOP_METER_TYPE
}
