// `pnpm --filter @vega/job-devtools bench:profile`: where the page's main
// thread goes while 10,000 events per second stream into an open panel. A
// V8 CPU profile (sampled every 100 µs) attributes the JavaScript to the
// app's runtime, the bridge, the panel's ingest, reduce and draw; a trace of
// the same run gives the browser's own style, layout, paint and compositing
// work. Every figure is divided by the events streamed: the cost per event.
// A measurement for bench/README.md, not a test: it checks the work was done.

import type { FileServer } from '@vega/browser'
import type { Browser, CDPSession, Page } from 'playwright-core'
import { afterAll, beforeAll, expect, it } from 'vitest'
import { launchChromium } from './support/browser.js'
import { serveTestPages } from './support/server.js'

let server: FileServer
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
  /** Thread time: the CPU the event took. */
  readonly tdur?: number
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

/** Sampled wall time per bucket (ms), and per function when `top` is asked. */
function attribute(
  profile: CpuProfile,
  top: number,
): {
  buckets: Map<string, number>
  functions: Array<[string, number]>
} {
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
    if (top > 0) {
      const frame = byId.get(id)?.callFrame
      const caller = byId.get(parent.get(id) ?? -1)?.callFrame.functionName
      const name = `${frame?.functionName || '(anonymous)'} in ${frame?.url.replace(/.*\//, '') || '(native)'}, called by ${caller || '(anonymous)'}`
      self.set(name, (self.get(name) ?? 0) + ms)
    }
  })
  const functions = [...self].sort((a, b) => b[1] - a[1]).slice(0, top)
  return { buckets, functions }
}

/**
 * The renderer main thread's CPU time (thread time, not wall time: on a
 * loaded machine the wall time includes waiting for a core), in all, and in
 * the browser's own rendering steps.
 */
function browserWork(trace: readonly TraceEvent[]) {
  const main = trace.find(
    (event) => event.name === 'thread_name' && event.args?.name === 'CrRendererMain',
  )
  const steps = ['UpdateLayoutTree', 'Layout', 'PrePaint', 'Paint', 'Layerize', 'Commit']
  const cpu = new Map<string, number>()
  const counts = new Map<string, number>()
  let total = 0
  const long: number[] = []
  for (const event of trace) {
    if (main === undefined || event.tid !== main.tid || event.pid !== main.pid) continue
    if (event.ph !== 'X') continue
    const ms = (event.tdur ?? event.dur ?? 0) / 1000
    if (event.name === 'RunTask') {
      total += ms
      if ((event.dur ?? 0) / 1000 > 50) long.push((event.dur ?? 0) / 1000)
    } else if (steps.includes(event.name)) {
      cpu.set(event.name, (cpu.get(event.name) ?? 0) + ms)
      counts.set(event.name, (counts.get(event.name) ?? 0) + 1)
    }
  }
  return { total, steps: cpu, counts, long }
}

it('where the main thread goes per event: panel open vs no panel', async () => {
  const lines: string[] = []
  const top = Number(process.env.PROFILE_TOP ?? 0)
  for (const withPanel of [true, false]) {
    const page = await browser.newPage({ viewport: { width: 1280, height: 900 } })
    await page.goto(server.url)
    await page.waitForFunction(
      () => (window as unknown as { vegaReady?: boolean }).vegaReady === true,
    )
    const { profile, trace, events } = await profileStream(page, withPanel, 6)
    await page.close()
    expect(events).toBeGreaterThan(0)
    const perEvent = (ms: number) => `${((ms * 1000) / events).toFixed(2)} µs`
    const browserCpu = browserWork(trace)
    const { buckets, functions } = attribute(profile, top)
    const sorted = [...buckets].filter(([name]) => name !== 'idle').sort((a, b) => b[1] - a[1])
    const sampled = sorted.reduce((sum, [, ms]) => sum + ms, 0)
    // The samples say where the time went; the trace's thread time says how
    // much CPU it was: each bucket gets its share of that CPU.
    const cpuOf = (ms: number) => (ms / Math.max(1e-9, sampled)) * browserCpu.total
    lines.push(
      `${withPanel ? 'panel open' : 'no panel'}: ${events.toLocaleString('en')} events in 6 s; main-thread CPU ${browserCpu.total.toFixed(0)} ms = ${perEvent(browserCpu.total)} per event; ${browserCpu.long.length} long tasks (${browserCpu.long.map((ms) => ms.toFixed(0)).join(', ')} ms)`,
    )
    for (const [name, ms] of sorted)
      lines.push(
        `  ${name}: ${perEvent(cpuOf(ms))} per event (${((ms / sampled) * 100).toFixed(0)} %)`,
      )
    lines.push(
      `  of which the browser's rendering steps: ${[...browserCpu.steps].map(([name, ms]) => `${name} ${perEvent(ms)} (${browserCpu.counts.get(name)}×)`).join(', ')}`,
    )
    if (top > 0) {
      lines.push(`  top ${top} functions by self time (sampled ms):`)
      for (const [name, ms] of functions) lines.push(`    ${ms.toFixed(0)} ${name}`)
    }
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
