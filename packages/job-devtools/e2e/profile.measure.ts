// `pnpm --filter @vega/job-devtools bench:profile`: where the page's main
// thread goes while 10,000 events per second stream into an open panel. A
// V8 CPU profile (sampled every 100 µs) attributes the JavaScript to the
// app's runtime, the bridge, the panel's ingest, reduce and draw; a trace of
// the same run gives the browser's own style, layout, paint and compositing
// work. Every figure is divided by the events streamed: the cost per event.
// A measurement for bench/README.md, not a test: it checks the work was done.
import type { Browser, CDPSession, Page } from 'playwright-core'
import { afterAll, beforeAll, expect, it } from 'vitest'
import { launchChromium } from './support/browser.js'
import { serveTestPages, type TestServer } from './support/server.js'

let server: TestServer
let browser: Browser

beforeAll(async () => {
  server = await serveTestPages()
  browser = await launchChromium()
})

afterAll(async () => {
  await browser?.close()
  await server?.close()
})

interface ProfileNode {
  readonly id: number
  readonly callFrame: { readonly functionName: string; readonly url: string }
  readonly children?: readonly number[]
}
interface CpuProfile {
  readonly nodes: readonly ProfileNode[]
  readonly samples: readonly number[]
  readonly timeDeltas: readonly number[]
}
interface TraceEvent {
  readonly name: string
  readonly ph: string
  readonly tid: number
  readonly pid: number
  readonly dur?: number
  readonly args?: { readonly name?: string }
}

/** Which part of the page a stack belongs to, judged by its frames from the root. */
function bucketOf(stack: readonly ProfileNode['callFrame'][]): string {
  const leaf = stack[stack.length - 1]
  if (leaf?.functionName === '(garbage collector)') return 'gc'
  if (leaf?.functionName === '(program)') return 'browser, outside JS (style, layout, paint, tasks)'
  if (leaf?.functionName === '(idle)') return 'idle'
  // The deepest frame of ours decides; an entry point higher up says which.
  let bucket = 'other JS'
  for (const frame of stack) {
    const { url, functionName } = frame
    if (url.includes('/job-core/')) bucket = 'app: runtime (core, events to listeners)'
    else if (url.includes('/job-devtools-protocol/')) {
      if (bucket.startsWith('panel: draw')) continue
      if (bucket.startsWith('panel')) bucket = 'panel: reduce (protocol reducer)'
      else bucket = 'bridge: hold, encode, flush'
    } else if (url.includes('/job-devtools/')) {
      if (/^(onBatch|enqueue|send)$/.test(functionName)) bucket = 'panel: ingest (onBatch)'
      else if (/render|draw|Labels|measure|place|setText|lanesOf/i.test(functionName))
        bucket = 'panel: draw (view, lanes, log)'
      else if (/flush|apply|reduce|trim|open/i.test(functionName)) bucket = 'panel: model flush'
      else if (bucket === 'other JS' || bucket.startsWith('app')) bucket = 'panel: other'
    } else if (url.includes('127.0.0.1') && !url.includes('/pkg/')) bucket = 'app: the bench page'
  }
  return bucket
}

async function traceOf(cdp: CDPSession, stop: () => Promise<void>): Promise<TraceEvent[]> {
  const events: TraceEvent[] = []
  cdp.on('Tracing.dataCollected', ({ value }) => {
    events.push(...(value as unknown as TraceEvent[]))
  })
  const complete = new Promise<void>((done) => cdp.once('Tracing.tracingComplete', () => done()))
  await stop()
  await cdp.send('Tracing.end')
  await complete
  return events
}

async function profileStream(page: Page, withPanel: boolean, seconds: number) {
  const cdp = await page.context().newCDPSession(page)
  await cdp.send('Profiler.enable')
  await cdp.send('Profiler.setSamplingInterval', { interval: 100 })
  await page.evaluate(async (withPanel) => {
    const { vega } = window as unknown as { vega: Globals }
    const runtime = vega.newRuntime('profile-stream')
    ;(window as unknown as { runtime: typeof runtime }).runtime = runtime
    if (withPanel) await vega.devtools.mountDevtools({ source: runtime, open: true }).ready()
  }, withPanel)
  await cdp.send('Tracing.start', {
    categories: 'devtools.timeline,disabled-by-default-devtools.timeline',
    transferMode: 'ReportEvents',
  })
  await cdp.send('Profiler.start')
  let tasks = 0
  const trace = await traceOf(cdp, async () => {
    tasks = await page.evaluate(async (seconds) => {
      const { vega, runtime } = window as unknown as {
        vega: Globals
        runtime: import('@vega/job-core').Runtime
      }
      const started = performance.now()
      let label = 0
      await new Promise<void>((done) => {
        const timer = setInterval(() => {
          const elapsed = Math.min(seconds * 1000, performance.now() - started)
          const owed = Math.floor(elapsed * 2.5) - label
          for (let i = 0; i < owed; i++)
            vega.core.run(runtime, async () => i, { label: `stream ${label++}` })
          if (elapsed >= seconds * 1000) {
            clearInterval(timer)
            done()
          }
        }, 10)
      })
      await new Promise((resolve) => setTimeout(resolve, 100))
      return label
    }, seconds)
  })
  const { profile } = (await cdp.send('Profiler.stop')) as unknown as { profile: CpuProfile }
  await cdp.detach()
  return { profile, trace, events: tasks * 4 }
}

function attribute(profile: CpuProfile): Map<string, number> {
  const parent = new Map<number, number>()
  const byId = new Map<number, ProfileNode>()
  for (const node of profile.nodes) {
    byId.set(node.id, node)
    for (const child of node.children ?? []) parent.set(child, node.id)
  }
  const buckets = new Map<string, number>()
  const self = new Map<string, number>()
  const stackCache = new Map<number, string>()
  profile.samples.forEach((id, index) => {
    let bucket = stackCache.get(id)
    if (bucket === undefined) {
      const stack: ProfileNode['callFrame'][] = []
      for (let at: number | undefined = id; at !== undefined; at = parent.get(at)) {
        const node = byId.get(at)
        if (node !== undefined) stack.unshift(node.callFrame)
      }
      bucket = bucketOf(stack)
      stackCache.set(id, bucket)
    }
    const ms = (profile.timeDeltas[index + 1] ?? 0) / 1000
    buckets.set(bucket, (buckets.get(bucket) ?? 0) + ms)
    if (process.env.PROFILE_DEBUG === '1') {
      const node = byId.get(id)
      const name = `${node?.callFrame.functionName} ${node?.callFrame.url.replace(/.*\//, '')} <- ${byId.get(parent.get(id) ?? -1)?.callFrame.functionName}`
      self.set(name, (self.get(name) ?? 0) + ms)
    }
  })
  if (process.env.PROFILE_DEBUG === '1')
    console.log(
      [...self]
        .sort((a, b) => b[1] - a[1])
        .slice(0, 45)
        .map(([n, ms]) => `${ms.toFixed(0)} ${n}`)
        .join('\n'),
    )
  return buckets
}

/** Top-level renderer main-thread work by trace event name (ms, nested events apart). */
function browserWork(trace: readonly TraceEvent[]): Map<string, number> {
  const main = trace.find(
    (event) => event.name === 'thread_name' && event.args?.name === 'CrRendererMain',
  )
  const names = [
    'UpdateLayoutTree',
    'Layout',
    'PrePaint',
    'Paint',
    'Layerize',
    'Commit',
    'HitTest',
    'ParseHTML',
  ]
  const out = new Map<string, number>()
  for (const event of trace) {
    if (main !== undefined && (event.tid !== main.tid || event.pid !== main.pid)) continue
    if (event.ph !== 'X' || event.dur === undefined) continue
    const name = event.name === 'RunTask' ? 'RunTask (all main-thread tasks)' : event.name
    if (name !== 'RunTask (all main-thread tasks)' && !names.includes(name)) continue
    out.set(name, (out.get(name) ?? 0) + event.dur / 1000)
  }
  const longest = trace
    .filter((event) => event.name === 'RunTask' && main !== undefined && event.tid === main.tid)
    .map((event) => (event.dur ?? 0) / 1000)
    .filter((ms) => ms > 50)
  out.set(
    `long tasks (${longest.length}), their total`,
    longest.reduce((a, b) => a + b, 0),
  )
  if (process.env.PROFILE_DEBUG === '1') {
    const layouts = trace.filter((event) => event.name === 'Layout' && event.ph === 'X')
    const frames = trace.filter((event) => event.name === 'FireAnimationFrame' && event.ph === 'X')
    console.log(
      `layouts ${layouts.length}, frames ${frames.length}, dirty avg ${layouts.reduce((a, e) => a + ((e.args as any)?.beginData?.dirtyObjects ?? 0), 0) / layouts.length}, total objs ${(layouts[50]?.args as any)?.beginData?.totalObjects}, layout tdur avg ${layouts.reduce((a, e) => a + ((e as any).tdur ?? 0), 0) / layouts.length / 1000} ms`,
    )
    const counts = new Map<string, number>()
    for (const event of trace)
      if (main !== undefined && event.tid === main.tid && event.ph === 'X')
        counts.set(event.name, (counts.get(event.name) ?? 0) + (event.dur ?? 0) / 1000)
    console.log([...counts].sort((a, b) => b[1] - a[1]).slice(0, 40))
  }
  return out
}

it('where the main thread goes per event: panel open vs no panel', async () => {
  const lines: string[] = []
  for (const withPanel of process.env.PROFILE_DEBUG === '1' ? [true] : [true, false]) {
    const page = await browser.newPage({ viewport: { width: 1280, height: 900 } })
    await page.goto(server.url)
    await page.waitForFunction(
      () => (window as unknown as { vegaReady?: boolean }).vegaReady === true,
    )
    const { profile, trace, events } = await profileStream(page, withPanel, 6)
    await page.close()
    expect(events).toBeGreaterThan(0)
    const perEvent = (ms: number) => `${((ms * 1000) / events).toFixed(2)} µs`
    const buckets = [...attribute(profile)].sort((a, b) => b[1] - a[1])
    const busy = buckets.filter(([name]) => name !== 'idle').reduce((sum, [, ms]) => sum + ms, 0)
    lines.push(
      `${withPanel ? 'panel open' : 'no panel'}: ${events.toLocaleString('en')} events; sampled main thread busy ${busy.toFixed(0)} ms = ${perEvent(busy)} per event`,
    )
    for (const [name, ms] of buckets) {
      if (name === 'idle') continue
      lines.push(`  ${name}: ${ms.toFixed(0)} ms, ${perEvent(ms)} per event`)
    }
    lines.push('  trace, renderer main thread:')
    for (const [name, ms] of browserWork(trace))
      lines.push(`    ${name}: ${ms.toFixed(0)} ms, ${perEvent(ms)} per event`)
  }
  const load = await import('node:os').then((os) => os.loadavg().map((x) => x.toFixed(1)))
  console.log(
    `\ndevtools stream profile (Chromium ${browser.version()}, load average ${load.join(' ')})\n${lines.join('\n')}\n`,
  )
}, 180_000)

interface Globals {
  readonly core: typeof import('@vega/job-core')
  readonly devtools: typeof import('../src/index.js')
  newRuntime(name: string): import('@vega/job-core').Runtime
}
