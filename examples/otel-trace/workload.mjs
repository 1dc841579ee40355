// A small service's work, traced: two requests share one runtime with two
// slots. The first loads a user twice (two components, one dedupe), the
// second searches as the user types (restart) and sends a report that fails
// twice before it goes through (retry); image resizes from both requests
// wait for a slot. Real timers, real SDK, spans kept in memory.
import { context } from '@opentelemetry/api'
import { AsyncLocalStorageContextManager } from '@opentelemetry/context-async-hooks'
import {
  BasicTracerProvider,
  InMemorySpanExporter,
  SimpleSpanProcessor,
} from '@opentelemetry/sdk-trace-base'
import {
  dedupeCoordinator,
  installCoordination,
  restartCoordinator,
  withCoordinator,
} from '@vega/job-coordination'
import { createRuntime, run, settle } from '@vega/job-core'
import { installTracing } from '@vega/job-otel'

/** Runs the workload; resolves with every finished span. */
export async function traceWorkload() {
  const contextManager = new AsyncLocalStorageContextManager().enable()
  context.setGlobalContextManager(contextManager)
  const exporter = new InMemorySpanExporter()
  const provider = new BasicTracerProvider({ spanProcessors: [new SimpleSpanProcessor(exporter)] })
  const tracer = provider.getTracer('otel-trace example')
  const runtime = createRuntime({ name: 'web', concurrency: 2, plugins: [installCoordination] })
  const uninstall = installTracing(runtime, { tracer })

  const sleep = (ms, signal) =>
    new Promise((resolve, reject) => {
      const timer = setTimeout(resolve, ms)
      signal?.addEventListener('abort', () => {
        clearTimeout(timer)
        reject(signal.reason)
      })
    })
  // A span the body itself starts: it lands under the attempt that runs it.
  const query = (name, ms, signal) =>
    tracer.startActiveSpan(name, (span) => sleep(ms, signal).finally(() => span.end()))

  const request = (name, work) =>
    tracer.startActiveSpan(name, async (span) => {
      await work()
      span.end()
    })

  const loadUser = withCoordinator(
    (ctx) => query('SELECT user 42', 15, ctx.signal),
    dedupeCoordinator,
    { key: ['user', 42] },
  )
  const search = (text) =>
    withCoordinator((ctx) => query(`search "${text}"`, 20, ctx.signal), restartCoordinator, {
      key: 'search',
    })
  let reportCalls = 0
  const sendReport = async (ctx) => {
    reportCalls++
    await query('POST smtp', 5, ctx.signal)
    if (reportCalls < 3) throw new Error(`smtp busy (call ${reportCalls})`)
  }
  const resize = (n) => (ctx) => query(`resize ${n}`, 25, ctx.signal)

  const dashboard = request('GET /dashboard', () =>
    Promise.all([
      run(runtime, loadUser, { label: 'load user' }),
      run(runtime, loadUser, { label: 'load user' }),
      run(runtime, resize(1), { label: 'resize image' }),
    ]),
  )
  const report = request('POST /report', async () => {
    const typing = ['v', 've'].map((text) =>
      settle(run(runtime, search(text), { label: 'search' })),
    )
    await sleep(5)
    await Promise.all([
      ...typing,
      run(runtime, search('vega'), { label: 'search' }),
      run(runtime, resize(2), { label: 'resize image' }),
      run(runtime, sendReport, { label: 'send report', retry: { attempts: 3, delay: 10 } }),
    ])
  })
  await Promise.all([dashboard, report])
  uninstall()
  const spans = [...exporter.getFinishedSpans()]
  await provider.shutdown()
  context.disable()
  return spans
}
