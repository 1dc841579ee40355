// What a newcomer reads in the panel, in Debian's headless Chromium: states
// drawn from the one palette (parked hatched orange, never the queued slate),
// a legend and a time axis, details that scroll and say what a duration is,
// per second counted from now, a close button and a hotkey the browser does
// not keep for itself, log rows that tell shutdown's phases apart and show a
// long key in full.
import type { FileServer } from '@vega/browser'
import type { Browser, BrowserContext, Page } from 'playwright-core'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { STATE_STYLES } from '../src/palette.js'
import { keepOffline, launchChromium, saveScreenshot } from './support/browser.js'
import { serveTestPages } from './support/server.js'

let server: FileServer
let browser: Browser
let context: BrowserContext
const pageErrors: string[] = []
let offline: string[] = []

async function openApp(): Promise<Page> {
  const page = await context.newPage()
  page.on('pageerror', (error) => pageErrors.push(String(error)))
  page.on('console', (message) => {
    if (message.type() === 'error') pageErrors.push(message.text())
  })
  await page.goto(server.url)
  await page.waitForFunction(
    () => (window as unknown as { vegaReady?: boolean }).vegaReady === true,
  )
  return page
}

beforeAll(async () => {
  server = await serveTestPages()
  browser = await launchChromium()
  context = await browser.newContext({ viewport: { width: 1280, height: 900 } })
  offline = await keepOffline(context)
})

afterAll(async () => {
  await browser?.close()
  await server?.close()
  expect(pageErrors).toEqual([])
  expect(offline).toEqual([])
})

const styleOf = (name: string) => {
  const style = STATE_STYLES.find((entry) => entry.name === name)
  if (style === undefined) throw new Error(`no style ${name}`)
  return style
}
const rgb = (hex: string): [number, number, number] => [
  Number.parseInt(hex.slice(1, 3), 16),
  Number.parseInt(hex.slice(3, 5), 16),
  Number.parseInt(hex.slice(5, 7), 16),
]
const near = (pixel: readonly number[], color: readonly number[]) =>
  color.every((channel, index) => Math.abs((pixel[index] ?? -99) - channel) <= 3)

/**
 * Three calls through a serialize coordinator, `ms` each: #1 runs, #2 and #3
 * wait parked on the coordinator. Resolves once the panel shows the three
 * tasks (in whatever state they have reached: with short bodies a loaded
 * machine may show the panel after the first one ended).
 */
async function serializeRun(page: Page, ms: number): Promise<void> {
  await page.evaluate(async (ms) => {
    const { vega } = window as unknown as { vega: VegaGlobals }
    const runtime = vega.newRuntime('e2e-serialize')
    const serialize = vega.coordination.createSerializeCoordinator()
    const panel = vega.devtools.mountDevtools({ source: runtime, open: true })
    ;(window as unknown as { panel: unknown; runtime: unknown }).panel = panel
    ;(window as unknown as { runtime: unknown }).runtime = runtime
    for (let call = 1; call <= 3; call++) {
      vega.core.run(
        runtime,
        vega.coordination.withCoordinator(
          async (ctx: { sleep(ms: number): Promise<void> }) => ctx.sleep(ms),
          serialize,
          { key: 'doc' },
        ),
        { label: `save #${call}` },
      )
    }
    await panel.ready()
  }, ms)
  await expect.poll(() => page.locator('vega-job-devtools .row[data-task-id]').count()).toBe(3)
}

describe('states from one palette, with a legend and a time axis', () => {
  it('draws parked:coordinator hatched orange and queued apart; the legend shows the same colours', async () => {
    const page = await openApp()
    await serializeRun(page, 2_000)
    await expect
      .poll(() => page.locator('vega-job-devtools [data-count="parked"]').textContent())
      .toBe('2')
    // The third lane waits on the coordinator: its pixels are the parked orange and its stripes.
    const pixels = await page.evaluate(() => {
      const root = document.querySelector('vega-job-devtools')?.shadowRoot
      const canvas = root?.querySelector('canvas[data-lanes-canvas]') as HTMLCanvasElement
      const ratio = window.devicePixelRatio || 1
      const row = Array.from(root?.querySelectorAll('.row[data-task-id]') ?? []).findIndex(
        (element) => (element as HTMLElement).dataset.taskId === '3',
      )
      const y = Math.round((row * 20 + 10) * ratio)
      const data = canvas.getContext('2d')?.getImageData(0, y, canvas.width, 1).data ?? []
      const out: number[][] = []
      for (let index = 0; index < data.length; index += 4) {
        out.push([data[index], data[index + 1], data[index + 2]] as number[])
      }
      return out
    })
    const parked = rgb(styleOf('parked').color)
    const queued = rgb(styleOf('queued').color)
    const parkedPixels = pixels.filter((pixel) => near(pixel, parked)).length
    expect(parkedPixels).toBeGreaterThan(5)
    // Hatched: darker stripes of the same hue cross the bar.
    const stripes = pixels.filter(
      (pixel) =>
        !near(pixel, parked) &&
        (pixel[0] ?? 0) > 100 &&
        (pixel[0] ?? 0) < 200 &&
        (pixel[2] ?? 0) < 40,
    ).length
    expect(stripes).toBeGreaterThan(2)
    expect(pixels.some((pixel) => near(pixel, queued))).toBe(false)
    expect(queued).not.toEqual(parked)

    // The legend: one swatch per state, coloured from the same table.
    const legend = await page.$$eval('vega-job-devtools', (hosts) =>
      Array.from(hosts[0]?.shadowRoot?.querySelectorAll('[data-legend-state]') ?? []).map(
        (item) => ({
          state: (item as HTMLElement).dataset.legendState,
          text: item.textContent ?? '',
          background: getComputedStyle(item.querySelector('.swatch') as Element).backgroundImage,
          color: getComputedStyle(item.querySelector('.swatch') as Element).backgroundColor,
        }),
      ),
    )
    expect(legend.map((item) => item.state)).toEqual([
      'running',
      'parked',
      'queued',
      'idle',
      'success',
      'cancelled',
      'error',
    ])
    const parkedSwatch = legend.find((item) => item.state === 'parked')
    expect(parkedSwatch?.background).toContain('repeating-linear-gradient')
    expect(parkedSwatch?.background).toContain(`rgb(${parked.join(', ')})`)
    expect(legend.find((item) => item.state === 'queued')?.color).toBe(`rgb(${queued.join(', ')})`)
    expect(parkedSwatch?.text).toMatch(/hatched: waiting on a coordinator/)
    await page.close()
  })

  it('a time axis above the lanes: ticks since the session began, in order', async () => {
    const page = await openApp()
    await serializeRun(page, 400)
    await expect
      .poll(() => page.locator('vega-job-devtools [data-count="success"]').textContent(), {
        timeout: 15_000,
      })
      .toBe('3')
    const ticks = await page
      .locator('vega-job-devtools [data-axis] [data-tick-ms]')
      .evaluateAll((elements) =>
        elements.map((element) => ({
          ms: Number((element as HTMLElement).dataset.tickMs),
          text: element.textContent ?? '',
          left: (element as HTMLElement).getBoundingClientRect().left,
        })),
      )
    expect(ticks.length).toBeGreaterThanOrEqual(3)
    for (const [index, tick] of ticks.entries()) {
      expect(tick.text).toMatch(/^\+[\d.]+ (ms|s)$/)
      if (index > 0) {
        expect(tick.ms).toBeGreaterThan(ticks[index - 1]?.ms ?? 0)
        expect(tick.left).toBeGreaterThan(ticks[index - 1]?.left ?? 0)
      }
    }
    // Three bodies of 400 ms one after another: the axis reaches past 1 s.
    expect(ticks.at(-1)?.ms ?? 0).toBeGreaterThanOrEqual(1000)
    expect(await page.locator('vega-job-devtools [data-axis]').textContent()).toContain(
      'time since the session began',
    )
    await saveScreenshot(page, 'panel-serialize')
    await page.close()
  })
})

describe('details, per second, closing', () => {
  it('the details scroll to the last transition, and a duration says which state it was spent in', async () => {
    const page = await context.newPage()
    page.on('pageerror', (error) => pageErrors.push(String(error)))
    await page.setViewportSize({ width: 1100, height: 420 })
    await page.goto(server.url)
    await page.waitForFunction(
      () => (window as unknown as { vegaReady?: boolean }).vegaReady === true,
    )
    await page.evaluate(async () => {
      const { vega } = window as unknown as { vega: VegaGlobals }
      const runtime = vega.newRuntime('e2e-retries')
      const panel = vega.devtools.mountDevtools({ source: runtime, open: true })
      // A body that fails four times, then succeeds: a long history of transitions.
      let attempt = 0
      const task = vega.core.run(
        runtime,
        async () => {
          attempt += 1
          if (attempt < 5) throw new Error(`attempt ${attempt} failed`)
          return attempt
        },
        { label: 'flaky', retry: { attempts: 5, delay: 20 } },
      )
      await task.promise
      await panel.ready()
    })
    await page.locator('vega-job-devtools .row[data-task-id="1"]').click()
    const details = page.locator('vega-job-devtools [data-details]')
    await expect.poll(() => details.getAttribute('data-selected-task')).toBe('1')
    const items = details.locator('[data-transitions] li')
    expect(await items.count()).toBeGreaterThan(8)
    const sizes = await details.evaluate((element) => ({
      scroll: element.scrollHeight,
      client: element.clientHeight,
      overflow: getComputedStyle(element).overflowY,
    }))
    expect(sizes.scroll).toBeGreaterThan(sizes.client)
    // Drawn, not overlaid: a user sees there is more below.
    expect(sizes.overflow).toBe('scroll')
    // Scrolled to the end, the last transition is inside the details' box.
    const last = await details.evaluate((element) => {
      element.scrollTop = element.scrollHeight
      const box = element.getBoundingClientRect()
      const item = element.querySelector('[data-transitions] li:last-child') as HTMLElement
      const itemBox = item.getBoundingClientRect()
      return {
        text: item.textContent ?? '',
        inside: itemBox.top >= box.top - 1 && itemBox.bottom <= box.bottom + 1,
      }
    })
    expect(last.inside).toBe(true)
    expect(last.text).toContain('running → success')
    // A duration names the state it was spent in: the one the transition entered.
    expect(await items.allTextContents()).toContainEqual(
      expect.stringMatching(/queued → running · \d+ ms in running$/),
    )
    await page.close()
  })

  it('per second counts the second before now: an idle session falls to 0', async () => {
    const page = await openApp()
    await page.evaluate(async () => {
      const { vega } = window as unknown as { vega: VegaGlobals }
      const runtime = vega.newRuntime('e2e-idle')
      const panel = vega.devtools.mountDevtools({ source: runtime, open: true })
      await vega.restartBurst(runtime, 6, 5)
      await panel.ready()
    })
    await expect
      .poll(() => page.locator('vega-job-devtools [data-count="cancelled"]').textContent())
      .toBe('5')
    // No event after the burst: within a few seconds the figure is 0, not the burst's rate.
    await expect
      .poll(() => page.locator('vega-job-devtools [data-count="per-second"]').textContent(), {
        timeout: 10_000,
      })
      .toBe('0')
    await page.close()
  })

  it('a close button closes; the default hotkey Ctrl+Shift+F toggles it; Ctrl+Shift+J is left to the browser', async () => {
    const page = await openApp()
    await page.evaluate(async () => {
      const { vega } = window as unknown as { vega: VegaGlobals }
      const runtime = vega.newRuntime('e2e-close')
      const panel = vega.devtools.mountDevtools({ source: runtime, open: true })
      ;(window as unknown as { panel: unknown }).panel = panel
      await panel.ready()
    })
    const isOpen = () =>
      page.evaluate(() => (window as unknown as { panel: { isOpen: boolean } }).panel.isOpen)
    const close = page.locator('vega-job-devtools button[data-action="close"]')
    expect(await close.getAttribute('title')).toBe('close (Ctrl+Shift+F opens it again)')
    await close.click()
    expect(await isOpen()).toBe(false)
    expect(await page.locator('vega-job-devtools').getAttribute('open')).toBe(null)
    await page.keyboard.press('Control+Shift+J')
    expect(await isOpen()).toBe(false)
    await page.keyboard.press('Control+Shift+F')
    expect(await isOpen()).toBe(true)
    await page.keyboard.press('Control+Shift+F')
    expect(await isOpen()).toBe(false)
    await page.close()
  })
})

describe('the event log', () => {
  it('tells the two runtime:shutdown rows apart, and shows a long key in full', async () => {
    const page = await openApp()
    const longKey = `tenant-${'0123456789'.repeat(14)}-end`
    await page.evaluate(async (longKey) => {
      const { vega } = window as unknown as { vega: VegaGlobals }
      const runtime = vega.newRuntime('e2e-log')
      const panel = vega.devtools.mountDevtools({ source: runtime, open: true })
      await vega.core.run(
        runtime,
        vega.coordination.withCoordinator(async () => 1, vega.coordination.dedupeCoordinator, {
          key: longKey,
        }),
        { label: 'long key' },
      ).promise
      await vega.core.shutdown(runtime)
      await panel.ready()
    }, longKey)
    const log = page.locator('vega-job-devtools .log-row')
    await expect
      .poll(async () =>
        (await log.allTextContents()).filter((text) => text.includes('runtime:shutdown')),
      )
      .toEqual([
        expect.stringMatching(/runtime:shutdown started$/),
        expect.stringMatching(/runtime:shutdown finished$/),
      ])
    // The row is cut at the column's edge; its title holds the whole text, key included.
    const row = log.filter({ hasText: 'task:created' }).first()
    const cut = await row.evaluate((element) => element.scrollWidth > element.clientWidth)
    expect(cut).toBe(true)
    expect(await row.getAttribute('title')).toContain(longKey)
    // A click shows the task's key in full, wrapped inside the details.
    await row.click()
    const key = page.locator('vega-job-devtools [data-details] dd').nth(2)
    await expect.poll(() => key.textContent()).toContain(longKey)
    expect(await key.evaluate((element) => element.scrollWidth <= element.clientWidth)).toBe(true)
    await page.close()
  })
})

interface VegaGlobals {
  readonly core: typeof import('@vega/job-core')
  readonly coordination: typeof import('@vega/job-coordination')
  readonly devtools: typeof import('../src/index.js')
  newRuntime(name: string): import('@vega/job-core').Runtime
  restartBurst(
    runtime: import('@vega/job-core').Runtime,
    calls: number,
    ms: number,
  ): Promise<number[]>
}
