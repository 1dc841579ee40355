export { installTracing } from './install-tracing.js'
export type { AttemptsMode, TaskAttributes, TracedTaskInfo, TracingOptions } from './options.js'
export { VERSION } from './version.js'
