// `pnpm --filter @vega/job-devtools bench:scale`: the panel's scale, measured
// in the page (Debian's Chromium) and printed as bench lines for
// bench/README.md. A measurement, not a test: it checks that the work was
// done (rows shown, events counted), never how fast.
import type { Browser, Page } from 'playwright-core'
import { afterAll, beforeAll, expect, it } from 'vitest'
import { launchChromium } from './support/browser.js'
import { serveTestPages, type TestServer } from './support/server.js'

let server: TestServer
let browser: Browser
const lines: string[] = []

beforeAll(async () => {
  server = await serveTestPages()
  browser = await launchChromium(['--enable-precise-memory-info', '--js-flags=--expose-gc'])
})

afterAll(async () => {
  await browser?.close()
  await server?.close()
  console.log(
    `\ndevtools scale (Chromium ${browser?.version() ?? ''}, headless)\n${lines.join('\n')}\n`,
  )
})

async function openApp(): Promise<Page> {
  const page = await browser.newPage({ viewport: { width: 1280, height: 900 } })
  await page.goto(server.url)
  await page.waitForFunction(
    () => (window as unknown as { vegaReady?: boolean }).vegaReady === true,
  )
  return page
}

it('opening on 10,000 retained tasks: time to the first painted rows', async () => {
  const page = await openApp()
  const result = await page.evaluate(async () => {
    const { vega } = window as unknown as { vega: Globals }
    const runtime = vega.newRuntime('scale-open')
    const panel = vega.devtools.mountDevtools({ source: runtime, retention: { tasks: 10_000 } })
    for (let batch = 0; batch < 10; batch++) {
      const tasks = []
      for (let i = 0; i < 1000; i++)
        tasks.push(vega.core.run(runtime, async () => i, { label: `task ${batch * 1000 + i}` }))
      await Promise.all(tasks.map((task) => task.promise))
    }
    // Let the bridge flush and the model reduce what is recorded (while closed).
    // (a burst is reduced at most 4,000 envelopes per frame: 40,000 take 10)
    await new Promise((resolve) => setTimeout(resolve, 100))
    for (let frame = 0; frame < 30; frame++) await new Promise(requestAnimationFrame)
    const started = performance.now()
    panel.open()
    await panel.ready()
    await new Promise(requestAnimationFrame)
    const openMs = performance.now() - started
    const host = document.querySelector('vega-job-devtools') as HTMLElement
    const rows = host.shadowRoot?.querySelectorAll('[data-task-id]').length ?? 0
    const success = host.shadowRoot?.querySelector('[data-count="success"]')?.textContent
    return { openMs, rows, success }
  })
  expect(result.success).toBe('10000')
  expect(result.rows).toBeGreaterThan(0)
  lines.push(
    `open on 10,000 retained tasks → first rows painted: ${result.openMs.toFixed(0)} ms (target ≤ 200 ms; includes loading the UI chunk)`,
  )
  await page.close()
})

it('10,000 events per second for 10 s with the panel open: long tasks and heap', async () => {
  const page = await openApp()
  const result = await page.evaluate(async () => {
    const { vega } = window as unknown as { vega: Globals }
    // Time every animation-frame callback: the panel's own work per frame
    // (reduce + draw), told apart from the rest of the page and the machine.
    const frameWork: number[] = []
    const request = window.requestAnimationFrame.bind(window)
    window.requestAnimationFrame = (callback) =>
      request((time) => {
        const begun = performance.now()
        callback(time)
        frameWork.push(performance.now() - begun)
      })
    const runtime = vega.newRuntime('scale-stream')
    const seen = { events: 0 }
    vega.core.subscribe(runtime, () => {
      seen.events += 1
    })
    const panel = vega.devtools.mountDevtools({ source: runtime, open: true })
    await panel.ready()
    const longTasks: number[] = []
    const observer = new PerformanceObserver((list) => {
      for (const entry of list.getEntries()) longTasks.push(entry.duration)
    })
    observer.observe({ type: 'longtask', buffered: false })
    const heap = () =>
      (performance as unknown as { memory: { usedJSHeapSize: number } }).memory.usedJSHeapSize
    const heapAt: Array<[number, number]> = []
    // Each task makes 4 events (created, queued, running, success): 25 tasks
    // every 10 ms is 10,000 events per second.
    const started = performance.now()
    let label = 0
    await new Promise<void>((done) => {
      const timer = setInterval(() => {
        for (let i = 0; i < 25; i++)
          vega.core.run(runtime, async () => i, { label: `stream ${label++}` })
        const elapsed = performance.now() - started
        if (heapAt.length < Math.floor(elapsed / 2000)) {
          ;(globalThis as { gc?: () => void }).gc?.()
          heapAt.push([Math.round(elapsed / 1000), heap()])
        }
        if (elapsed >= 10_000) {
          clearInterval(timer)
          done()
        }
      }, 10)
    })
    const seconds = (performance.now() - started) / 1000
    await new Promise((resolve) => setTimeout(resolve, 100))
    observer.disconnect()
    const host = document.querySelector('vega-job-devtools') as HTMLElement
    const trimmed = host.shadowRoot?.querySelector('[data-gap]')?.getAttribute('data-trimmed')
    frameWork.sort((a, b) => a - b)
    const frames = {
      count: frameWork.length,
      p50: frameWork[Math.floor(frameWork.length / 2)] ?? 0,
      p95: frameWork[Math.floor(frameWork.length * 0.95)] ?? 0,
      max: frameWork[frameWork.length - 1] ?? 0,
    }
    return { events: seen.events, seconds, longTasks, heapAt, trimmed, tasks: label, frames }
  })
  expect(result.events).toBeGreaterThan(0)
  const worst = Math.max(0, ...result.longTasks)
  lines.push(
    `stream ${Math.round(result.events / result.seconds).toLocaleString('en')} events/s for ${result.seconds.toFixed(1)} s (${result.tasks.toLocaleString('en')} tasks), panel open, retention 5,000 tasks / 50,000 events: ${result.longTasks.length} long tasks, longest ${worst.toFixed(0)} ms (target none > 50 ms); tasks trimmed by retention: ${result.trimmed}`,
  )
  lines.push(
    `panel work per animation frame (reduce + draw): ${result.frames.count} frames, p50 ${result.frames.p50.toFixed(1)} ms, p95 ${result.frames.p95.toFixed(1)} ms, max ${result.frames.max.toFixed(1)} ms`,
  )
  lines.push(
    `heap after gc while streaming: ${result.heapAt.map(([s, bytes]) => `${s} s ${(bytes / 1e6).toFixed(1)} MB`).join(', ')}`,
  )
  await page.close()
})

it("record: 'while-open', closed: throughput against no panel (and 'always', closed)", async () => {
  const page = await openApp()
  const result = await page.evaluate(async () => {
    const { vega } = window as unknown as { vega: Globals }
    const N = 20_000
    const workload = async (mode: 'none' | 'while-open' | 'always'): Promise<number> => {
      const runtime = vega.newRuntime(`throughput-${mode}`)
      const container = document.createElement('div')
      document.body.append(container)
      const panel =
        mode === 'none'
          ? undefined
          : vega.devtools.mountDevtools({ source: runtime, container, record: mode })
      ;(globalThis as { gc?: () => void }).gc?.()
      const started = performance.now()
      const tasks = []
      for (let i = 0; i < N; i++) tasks.push(vega.core.run(runtime, async () => i))
      await Promise.all(tasks.map((task) => task.promise))
      const elapsed = performance.now() - started
      panel?.destroy()
      container.remove()
      return elapsed
    }
    const modes = ['none', 'while-open', 'always'] as const
    const times: Record<string, number[]> = { none: [], 'while-open': [], always: [] }
    for (let round = 0; round < 9; round++) {
      // Interleaved, rotated: load on the machine falls on every mode alike.
      for (let k = 0; k < modes.length; k++) {
        const mode = modes[(round + k) % modes.length] as (typeof modes)[number]
        const ms = await workload(mode)
        if (round > 0) times[mode]?.push(ms)
      }
    }
    const median = (values: number[]) =>
      [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)] ?? 0
    return {
      N,
      none: median(times.none ?? []),
      whileOpen: median(times['while-open'] ?? []),
      always: median(times.always ?? []),
    }
  })
  expect(result.none).toBeGreaterThan(0)
  lines.push(
    `${result.N.toLocaleString('en')} trivial tasks in the page, median of 8 interleaved rounds: no panel ${result.none.toFixed(1)} ms; closed with record 'while-open' ${result.whileOpen.toFixed(1)} ms (${(result.whileOpen / result.none).toFixed(2)}×, target ≤ 1.03×); closed with record 'always' ${result.always.toFixed(1)} ms (${(result.always / result.none).toFixed(2)}×)`,
  )
  await page.close()
})

interface Globals {
  readonly core: typeof import('@vega/job-core')
  readonly devtools: typeof import('../src/index.js')
  newRuntime(name: string): import('@vega/job-core').Runtime
}
