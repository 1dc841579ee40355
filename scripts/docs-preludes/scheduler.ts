// prelude=scheduler: a standalone `dispatcher` and the `scheduling` plugin of
// a job runtime, both idle, for a sample that reads them. Aliased names, so
// a sample's own imports stay free.
import { createRuntime as createSchedulingRuntime } from '@vega/job-core'
import {
  createAggregateScheduling as createScheduling,
  AggregateDispatcher as Dispatcher,
} from '@vega/job-scheduler'

const dispatcher = new Dispatcher<{ step: number }>({
  name: 'order-commands',
  parallelism: 4,
  handle: async () => {},
})
const scheduling = createScheduling({ parallelism: 4 })
createSchedulingRuntime({ plugins: [scheduling] })
