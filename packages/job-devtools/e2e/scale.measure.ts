// `pnpm --filter @vega/job-devtools bench:scale`: the panel's scale, measured
// in the page (Debian's Chromium) and printed as bench lines for
// bench/README.md. A measurement, not a test: it checks that the work was
// done (rows shown, events counted), never how fast.
//
// Wall-clock times on a shared machine include the time the page waited for
// a core. So next to them each line gives the page's main-thread CPU time
// (Chromium's own `ThreadTime` metric, read over the DevTools protocol in
// thread ticks): what the work itself cost, whatever else the machine ran.

import type { FileServer } from '@vega/browser'
import type { Browser, Page } from 'playwright-core'
import { afterAll, beforeAll, expect, it } from 'vitest'
import { launchChromium } from './support/browser.js'
import { serveTestPages } from './support/server.js'

let server: FileServer
let browser: Browser
const lines: string[] = []

beforeAll(async () => {
  server = await serveTestPages()
  browser = await launchChromium(['--enable-precise-memory-info', '--js-flags=--expose-gc'])
})

afterAll(async () => {
  await browser?.close()
  await server?.close()
  const load = await import('node:os').then((os) => os.loadavg().map((x) => x.toFixed(1)))
  console.log(
    `\ndevtools scale (Chromium ${browser?.version() ?? ''}, headless; load average at the end ${load.join(' ')})\n${lines.join('\n')}\n`,
  )
})

/** A page of the e2e app, and a reader of its main thread's CPU time in ms. */
async function openApp(): Promise<{ page: Page; cpuMs: () => Promise<number> }> {
  const page = await browser.newPage({ viewport: { width: 1280, height: 900 } })
  await page.goto(server.url)
  await page.waitForFunction(
    () => (window as unknown as { vegaReady?: boolean }).vegaReady === true,
  )
  const cdp = await page.context().newCDPSession(page)
  await cdp.send('Performance.enable', { timeDomain: 'threadTicks' })
  const cpuMs = async (): Promise<number> => {
    const { metrics } = await cdp.send('Performance.getMetrics')
    const thread = metrics.find((metric) => metric.name === 'ThreadTime')
    if (thread === undefined) throw new Error('Chromium reported no ThreadTime metric')
    return thread.value * 1000
  }
  return { page, cpuMs }
}

const ms = (value: number): string => `${value.toFixed(0)} ms`

it('opening on 10,000 retained tasks: time to the first painted rows', async () => {
  const { page, cpuMs } = await openApp()
  await page.evaluate(async () => {
    const { vega } = window as unknown as { vega: Globals }
    const runtime = vega.newRuntime('scale-open')
    const panel = vega.devtools.mountDevtools({ source: runtime, retention: { tasks: 10_000 } })
    ;(window as unknown as { panel: typeof panel }).panel = panel
    for (let batch = 0; batch < 10; batch++) {
      const tasks = []
      for (let i = 0; i < 1000; i++)
        tasks.push(vega.core.run(runtime, async () => i, { label: `task ${batch * 1000 + i}` }))
      await Promise.all(tasks.map((task) => task.promise))
    }
    // Let the bridge flush and the model reduce what is recorded (while closed).
    // (a burst is reduced in tasks of at most 8 ms each: 40,000 envelopes take a few dozen)
    await new Promise((resolve) => setTimeout(resolve, 100))
    for (let frame = 0; frame < 30; frame++) await new Promise(requestAnimationFrame)
  })
  // `ready()` resolves in the animation frame after the first render: the
  // frame that paints the rows.
  const openPanel = () =>
    page.evaluate(async () => {
      const { panel } = window as unknown as { panel: import('../src/index.js').DevtoolsPanel }
      const started = performance.now()
      panel.open()
      await panel.ready()
      const host = document.querySelector('vega-job-devtools') as HTMLElement
      return {
        wallMs: performance.now() - started,
        rows: host.shadowRoot?.querySelectorAll('[data-task-id]').length ?? 0,
        success: host.shadowRoot?.querySelector('[data-count="success"]')?.textContent,
      }
    })
  const cpuBefore = await cpuMs()
  const first = await openPanel()
  const cpu = (await cpuMs()) - cpuBefore
  const chunkMs = await page.evaluate(
    () =>
      performance.getEntriesByType('resource').find((entry) => /\/view[^/]*\.js$/.test(entry.name))
        ?.duration,
  )
  // Opened again: the UI is loaded; the rows are drawn inside `open()`.
  await page.evaluate(async () => {
    const { panel } = window as unknown as { panel: import('../src/index.js').DevtoolsPanel }
    panel.close()
    await new Promise(requestAnimationFrame)
  })
  const cpuAgainBefore = await cpuMs()
  const again = await openPanel()
  const cpuAgain = (await cpuMs()) - cpuAgainBefore
  expect(first.success).toBe('10000')
  expect(first.rows).toBeGreaterThan(0)
  expect(again.rows).toBe(first.rows)
  lines.push(
    `open on 10,000 retained tasks → first rows painted: ${ms(first.wallMs)} (target ≤ 200 ms), main-thread CPU ${ms(cpu)}; includes loading the UI chunk (fetch ${chunkMs === undefined ? '?' : ms(chunkMs)})`,
  )
  lines.push(
    `open again (UI loaded) → rows painted: ${ms(again.wallMs)}, main-thread CPU ${ms(cpuAgain)}`,
  )
  await page.close()
})

/**
 * 10,000 events per second for 10 s into a runtime, with the panel open or
 * with no panel at all (the floor: what the stream alone costs the page).
 */
async function stream(withPanel: boolean) {
  const { page, cpuMs } = await openApp()
  const cpuBefore = await cpuMs()
  const result = await page.evaluate(async (withPanel) => {
    const { vega } = window as unknown as { vega: Globals }
    // Time every animation-frame callback: the panel's drawing per frame,
    // told apart from the rest of the page and the machine.
    const frameWork: number[] = []
    const request = window.requestAnimationFrame.bind(window)
    window.requestAnimationFrame = (callback) =>
      request((time) => {
        const begun = performance.now()
        callback(time)
        frameWork.push(performance.now() - begun)
      })
    // Time every timer callback too: the bridge's flushes and the panel's
    // reduce run in timers (the generator below uses setInterval, apart).
    const timerWork: number[] = []
    const setTimer = window.setTimeout.bind(window)
    window.setTimeout = ((
      callback: (...args: unknown[]) => void,
      ms?: number,
      ...args: unknown[]
    ) =>
      setTimer(() => {
        const begun = performance.now()
        callback(...args)
        timerWork.push(performance.now() - begun)
      }, ms)) as typeof window.setTimeout
    const runtime = vega.newRuntime('scale-stream')
    const seen = { events: 0 }
    vega.core.subscribe(runtime, () => {
      seen.events += 1
    })
    const panel = withPanel
      ? vega.devtools.mountDevtools({ source: runtime, open: true })
      : undefined
    await panel?.ready()
    const longTasks: Array<{ start: number; duration: number }> = []
    const observer = new PerformanceObserver((list) => {
      for (const entry of list.getEntries())
        longTasks.push({ start: entry.startTime, duration: entry.duration })
    })
    observer.observe({ type: 'longtask', buffered: false })
    const heap = () =>
      (performance as unknown as { memory: { usedJSHeapSize: number } }).memory.usedJSHeapSize
    const heapAt: Array<[number, number]> = []
    // The bench's own forced gc (for the heap readings) is a long task of the
    // bench, not of the panel: its windows are kept to tell them apart.
    const gcWindows: Array<[number, number]> = []
    // Each task makes 4 events (created, queued, running, success): 2.5 tasks
    // per ms is 10,000 events per second. Every 10 ms the generator starts
    // what the clock owes, so a late timer is caught up rather than lost.
    const started = performance.now()
    let label = 0
    await new Promise<void>((done) => {
      const timer = setInterval(() => {
        const elapsed = Math.min(10_000, performance.now() - started)
        const owed = Math.floor(elapsed * 2.5) - label
        for (let i = 0; i < owed; i++)
          vega.core.run(runtime, async () => i, { label: `stream ${label++}` })
        if (heapAt.length < Math.floor(elapsed / 2000)) {
          const gcStart = performance.now()
          ;(globalThis as { gc?: () => void }).gc?.()
          gcWindows.push([gcStart, performance.now()])
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
    // The banner is drawn at the panel's data rate: read it once all is drawn.
    await panel?.ready()
    const duringGc = (entry: { start: number; duration: number }) =>
      gcWindows.some(([from, to]) => entry.start <= from && entry.start + entry.duration >= to)
    const host = document.querySelector('vega-job-devtools')
    const trimmed = host?.shadowRoot?.querySelector('[data-gap]')?.getAttribute('data-trimmed')
    const spread = (work: number[]) => {
      work.sort((a, b) => a - b)
      return {
        count: work.length,
        p50: work[Math.floor(work.length / 2)] ?? 0,
        p95: work[Math.floor(work.length * 0.95)] ?? 0,
        max: work[work.length - 1] ?? 0,
      }
    }
    const frames = spread(frameWork)
    const timers = spread(timerWork)
    return {
      events: seen.events,
      seconds,
      longTasks: longTasks.filter((entry) => !duringGc(entry)).map((entry) => entry.duration),
      gcLongTasks: longTasks.filter(duringGc).map((entry) => entry.duration),
      heapAt,
      trimmed,
      tasks: label,
      frames,
      timers,
    }
  }, withPanel)
  const cpu = (await cpuMs()) - cpuBefore
  await page.close()
  return { ...result, cpu }
}

it('10,000 events per second for 10 s with the panel open: long tasks and heap', async () => {
  const result = await stream(true)
  const cpu = result.cpu
  expect(result.events).toBeGreaterThan(0)
  const worst = Math.max(0, ...result.longTasks)
  lines.push(
    `stream ${Math.round(result.events / result.seconds).toLocaleString('en')} events/s for ${result.seconds.toFixed(1)} s (${result.tasks.toLocaleString('en')} tasks), panel open, retention 5,000 tasks / 50,000 events: ${result.longTasks.length} long tasks, longest ${ms(worst)} (target none > 50 ms), besides ${result.gcLongTasks.length} around the bench's forced gc (${result.gcLongTasks.map(ms).join(', ')}); tasks trimmed by retention: ${result.trimmed}`,
  )
  lines.push(
    `main thread busy ${((cpu / (result.seconds * 1000)) * 100).toFixed(0)} % of the stream (CPU ${ms(cpu)} in ${result.seconds.toFixed(1)} s: the app's tasks, the bridge, the panel); the panel's drawing per animation frame: ${result.frames.count} frames, p50 ${result.frames.p50.toFixed(1)} ms, p95 ${result.frames.p95.toFixed(1)} ms, max ${result.frames.max.toFixed(1)} ms; timer callbacks (the bridge's flushes, the panel's reduce): ${result.timers.count}, p50 ${result.timers.p50.toFixed(1)} ms, p95 ${result.timers.p95.toFixed(1)} ms, max ${result.timers.max.toFixed(1)} ms`,
  )
  lines.push(
    `heap after gc while streaming: ${result.heapAt.map(([s, bytes]) => `${s} s ${(bytes / 1e6).toFixed(1)} MB`).join(', ')}`,
  )
  // The floor: the same stream into a page with no panel. Its long tasks are
  // the app's own (its bursts of run() calls, the browser's work), which no
  // panel can take away.
  const floor = await stream(false)
  expect(floor.events).toBeGreaterThan(0)
  lines.push(
    `floor: the same stream with no panel: ${Math.round(floor.events / floor.seconds).toLocaleString('en')} events/s, ${floor.longTasks.length} long tasks, longest ${ms(Math.max(0, ...floor.longTasks))} (besides ${floor.gcLongTasks.length} around the forced gc); main thread busy ${((floor.cpu / (floor.seconds * 1000)) * 100).toFixed(0)} %`,
  )
}, 120_000)

it("record: 'while-open', closed: throughput against no panel (and 'always', closed; and no panel again, the noise floor)", async () => {
  const { page, cpuMs } = await openApp()
  // Large enough that the protocol round trips around each run (in the CPU
  // reading) are well under 1 % of it.
  const N = 100_000
  // 'none again' is the same run as 'none': how far apart two identical
  // modes come out is the noise floor the other ratios are read against.
  type Mode = 'none' | 'while-open' | 'always' | 'none again'
  await page.evaluate(() => {
    const { vega } = window as unknown as { vega: Globals }
    let current: { runtime: import('@vega/job-core').Runtime; teardown(): void } | undefined
    const bench = {
      // Mounts (or not) a closed panel on a fresh runtime, then lets the page
      // settle and collects garbage: none of it is in the timed run.
      async prepare(mode: Mode) {
        const runtime = vega.newRuntime(`throughput-${mode}`)
        const container = document.createElement('div')
        document.body.append(container)
        const panel =
          mode === 'none' || mode === 'none again'
            ? undefined
            : vega.devtools.mountDevtools({ source: runtime, container, record: mode })
        current = {
          runtime,
          teardown() {
            panel?.destroy()
            container.remove()
          },
        }
        await new Promise((resolve) => setTimeout(resolve, 30))
        ;(globalThis as { gc?: () => void }).gc?.()
      },
      async run(count: number) {
        const runtime = current?.runtime as import('@vega/job-core').Runtime
        const started = performance.now()
        const tasks = []
        for (let i = 0; i < count; i++) tasks.push(vega.core.run(runtime, async () => i))
        await Promise.all(tasks.map((task) => task.promise))
        return performance.now() - started
      },
      teardown() {
        current?.teardown()
        current = undefined
      },
    }
    ;(window as unknown as { bench: typeof bench }).bench = bench
  })
  // Every rotation of the modes, forwards and backwards, so no mode always
  // follows the same one (a run pays for what the one before it left behind);
  // the first two rounds warm up and are dropped.
  const modes: Mode[] = ['none', 'while-open', 'always', 'none again']
  const rotations = modes.map((_, shift) => [...modes.slice(shift), ...modes.slice(0, shift)])
  const orders = [...rotations, ...rotations.map((order) => [...order].reverse())]
  const ROUNDS = 2 + 2 * orders.length
  const wall: Record<Mode, number[]> = { none: [], 'while-open': [], always: [], 'none again': [] }
  const cpu: Record<Mode, number[]> = { none: [], 'while-open': [], always: [], 'none again': [] }
  for (let round = 0; round < ROUNDS; round++) {
    for (const mode of orders[round % orders.length] as Mode[]) {
      await page.evaluate((m) => (window as unknown as { bench: Bench }).bench.prepare(m), mode)
      const before = await cpuMs()
      const wallMs = await page.evaluate(
        (count) => (window as unknown as { bench: Bench }).bench.run(count),
        N,
      )
      const cpuUsed = (await cpuMs()) - before
      await page.evaluate(() => (window as unknown as { bench: Bench }).bench.teardown())
      if (round < 2) continue
      wall[mode].push(wallMs)
      cpu[mode].push(cpuUsed)
    }
  }
  const median = (values: readonly number[]) =>
    [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)] ?? Number.NaN
  const ratio = (values: Record<Mode, number[]>, mode: Mode) =>
    median(values[mode]) / median(values.none)
  expect(median(wall.none)).toBeGreaterThan(0)
  const line = (mode: Mode, digits: number) =>
    `${ms(median(wall[mode]))} wall / ${ms(median(cpu[mode]))} CPU (${ratio(wall, mode).toFixed(digits)}× wall, ${ratio(cpu, mode).toFixed(digits)}× CPU)`
  lines.push(
    `${N.toLocaleString('en')} trivial tasks in the page, ${wall.none.length} runs per mode, in every rotation of the modes both ways (medians, ratios to no panel): no panel ${ms(median(wall.none))} wall / ${ms(median(cpu.none))} CPU; no panel again (noise floor) ${line('none again', 3)}; closed with record 'while-open' ${line('while-open', 3)}, target ≤ 1.03×; closed with record 'always' ${line('always', 2)}`,
  )
  await page.close()
})

interface Bench {
  prepare(mode: 'none' | 'while-open' | 'always' | 'none again'): Promise<void>
  run(count: number): Promise<number>
  teardown(): void
}

interface Globals {
  readonly core: typeof import('@vega/job-core')
  readonly devtools: typeof import('../src/index.js')
  newRuntime(name: string): import('@vega/job-core').Runtime
}
