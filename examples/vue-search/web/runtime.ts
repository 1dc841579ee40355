import { installCoordination } from '@vega/job-coordination'
import { createRuntime, inspect, type RuntimeInspection } from '@vega/job-core'

/** The app's one runtime; `createJobPlugin` hands it to every composable. */
export const runtime = createRuntime({ name: 'vue-search', plugins: [installCoordination] })

declare global {
  /** For the browser console and the end-to-end test: what the runtime holds now. */
  var inspectRuntime: () => RuntimeInspection
}
globalThis.inspectRuntime = () => inspect(runtime)
