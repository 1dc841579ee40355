// pnpm --filter @vega/example-otel-trace start
// Traces a small workload with the real OpenTelemetry SDK and prints each
// trace as a text waterfall: no collector, no UI.
import { renderWaterfall } from './waterfall.mjs'
import { traceWorkload } from './workload.mjs'

const spans = await traceWorkload()
console.log(renderWaterfall(spans).join('\n'))
