// The built panel in headless Chromium: Debian's /usr/bin/chromium driven by
// playwright-core, never a downloaded browser. Every request that is not for
// 127.0.0.1 is refused, so the panel must work offline. Playwright's CSS
// locators pierce open shadow roots, as a user's own e2e tests would.
import { readFileSync } from 'node:fs'
import type { FileServer } from '@vega/browser'
import type { Browser, BrowserContext, Page } from 'playwright-core'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { readGolden } from '../test/support/fixtures.js'
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

const rows = (page: Page) => page.locator('vega-job-devtools [data-task-id]')
/** Rows a user sees: a row the filter cut must not stay on screen with its old text. */
const visibleRows = (page: Page) => page.locator('vega-job-devtools .row:visible')
const rowTexts = (page: Page) =>
  page.$$eval('vega-job-devtools', (hosts) =>
    hosts.flatMap((host) =>
      Array.from(host.shadowRoot?.querySelectorAll('[data-task-id]') ?? []).map((row) => ({
        id: (row as HTMLElement).dataset.taskId,
        text: row.textContent ?? '',
      })),
    ),
  )

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

describe('a panel on a live runtime', () => {
  it('shows one lane per task, with label and state as text, and the counts', async () => {
    const page = await openApp()
    const created = await page.evaluate(async () => {
      const { vega } = window as unknown as { vega: VegaGlobals }
      const runtime = vega.newRuntime('e2e-live')
      const seen = vega.countCreated(runtime)
      const panel = vega.devtools.mountDevtools({ source: runtime })
      ;(window as unknown as { panel: unknown }).panel = panel
      await vega.restartBurst(runtime, 4, 20)
      panel.open()
      await panel.ready()
      return seen.created
    })
    expect(created).toBe(4)
    await expect.poll(() => rows(page).count()).toBe(created)
    // The bridge flushes every 16 ms: wait for the last settlement to arrive.
    await expect
      .poll(() => page.locator('vega-job-devtools [data-count="success"]').textContent())
      .toBe('1')
    const shown = await rowTexts(page)
    expect(shown.map((row) => row.id)).toEqual(['1', '2', '3', '4'])
    for (const [index, row] of shown.entries()) {
      expect(row.text).toContain(`call #${index + 1}`)
      expect(row.text).toContain(index < 3 ? 'cancelled' : 'success')
    }
    const count = (state: string) =>
      page.locator(`vega-job-devtools [data-count="${state}"]`).textContent()
    expect(await count('cancelled')).toBe('3')
    expect(await count('success')).toBe('1')
    expect(await count('running')).toBe('0')
    await expect.poll(() => page.locator('vega-job-devtools [data-gap]').isVisible()).toBe(false)
    await saveScreenshot(page, 'panel-live')
    await page.close()
  })

  it('a second mount on the same container fails; a StrictMode-like remount gives one session', async () => {
    const page = await openApp()
    const outcome = await page.evaluate(async () => {
      const { vega } = window as unknown as { vega: VegaGlobals }
      const runtime = vega.newRuntime('e2e-strict')
      const first = vega.devtools.mountDevtools({ source: runtime })
      let error = ''
      try {
        vega.devtools.mountDevtools({ source: runtime })
      } catch (caught) {
        error = (caught as Error).message
      }
      // React StrictMode: effect, cleanup, effect again.
      first.destroy()
      const second = vega.devtools.mountDevtools({ source: runtime, open: true })
      await vega.restartBurst(runtime, 2, 5)
      await second.ready()
      return { error, hosts: document.querySelectorAll('vega-job-devtools').length }
    })
    expect(outcome.error).toMatch(/already holds a devtools panel; call destroy\(\)/)
    expect(outcome.hosts).toBe(1)
    await expect.poll(() => rows(page).count()).toBe(2)
    const sessions = await page.locator('vega-job-devtools select[data-session] option').count()
    expect(sessions).toBe(1)
    await page.close()
  })

  it('closed renders nothing: the UI is loaded on first open and the element is hidden', async () => {
    const page = await openApp()
    const state = await page.evaluate(async () => {
      const { vega } = window as unknown as { vega: VegaGlobals }
      const runtime = vega.newRuntime('e2e-closed')
      const panel = vega.devtools.mountDevtools({ source: runtime })
      await vega.restartBurst(runtime, 3, 5)
      const host = document.querySelector('vega-job-devtools') as HTMLElement
      const closed = {
        display: getComputedStyle(host).display,
        shadowChildren: host.shadowRoot?.children.length,
      }
      // The default hotkey, Ctrl+Shift+F (Ctrl+Shift+J is the browser's console).
      const shortcut = { key: 'F', ctrlKey: true, shiftKey: true, bubbles: true }
      document.dispatchEvent(new KeyboardEvent('keydown', shortcut))
      await panel.ready()
      return { closed, open: panel.isOpen, display: getComputedStyle(host).display }
    })
    // Only the host's own <style> exists before the first open.
    expect(state.closed).toEqual({ display: 'none', shadowChildren: 1 })
    expect(state.open).toBe(true)
    expect(state.display).toBe('block')
    // Recorded while closed: opening shows what already happened.
    await expect.poll(() => rows(page).count()).toBe(3)
    await page.close()
  })
})

describe("record: 'while-open'", () => {
  it('listens only while open, starts from the snapshot of live tasks, and stays one session', async () => {
    const page = await openApp()
    const state = await page.evaluate(async () => {
      const { vega } = window as unknown as { vega: VegaGlobals }
      const runtime = vega.newRuntime('e2e-while-open')
      const listeners = () => vega.core.inspect(runtime).sizes.listeners
      const panel = vega.devtools.mountDevtools({ source: runtime, record: 'while-open' })
      const closedBeforeOpen = listeners()
      // Before any open: finished tasks are never seen; one stays running.
      await vega.restartBurst(runtime, 2, 5)
      const release = { done: () => {} }
      vega.core.run(
        runtime,
        () =>
          new Promise<string>((resolve) => {
            release.done = () => resolve('released')
          }),
        { label: 'long-lived' },
      )
      panel.open()
      await panel.ready()
      await new Promise((resolve) => setTimeout(resolve, 50))
      await panel.ready()
      const whileOpen = listeners()
      panel.close()
      const closedAgain = listeners()
      await vega.restartBurst(runtime, 2, 5)
      panel.open()
      release.done()
      await new Promise((resolve) => setTimeout(resolve, 50))
      await panel.ready()
      return { closedBeforeOpen, whileOpen, closedAgain }
    })
    // A closed panel does not listen at all.
    expect(state).toEqual({ closedBeforeOpen: 0, whileOpen: 1, closedAgain: 0 })
    // Only the task live at the first open (from the snapshot) was ever shown:
    // the bursts ran while nobody listened.
    await expect.poll(() => rows(page).count()).toBe(1)
    const shown = await rowTexts(page)
    expect(shown[0]?.text).toContain('long-lived')
    expect(shown[0]?.text).toContain('success')
    expect(await page.locator('vega-job-devtools select[data-session] option').count()).toBe(1)
    expect(await page.locator('vega-job-devtools [data-gap]').isVisible()).toBe(false)
    await page.close()
  })
})

describe('a panel on recordings', () => {
  it('filters cut rows, and the cancelledBy link selects the canceller', async () => {
    const page = await openApp()
    const restart = readGolden('restart')
    await page.evaluate(async (text) => {
      const { vega } = window as unknown as { vega: VegaGlobals }
      const panel = vega.devtools.mountDevtools({ open: true })
      panel.load(text)
      await panel.ready()
    }, restart)
    await expect.poll(() => rows(page).count()).toBe(4)
    await page.locator('vega-job-devtools select[data-filter="state"]').selectOption('cancelled')
    await expect.poll(() => rows(page).count()).toBe(3)
    expect(await visibleRows(page).count()).toBe(3)
    await page.locator('vega-job-devtools select[data-filter="state"]').selectOption('')
    await page.locator('vega-job-devtools input[data-filter="label"]').fill('call #4')
    await expect.poll(() => rows(page).count()).toBe(1)
    expect(await visibleRows(page).allTextContents()).toEqual([
      expect.stringMatching(/call #4.*success/),
    ])
    await page.locator('vega-job-devtools input[data-filter="label"]').fill('')
    await expect.poll(() => rows(page).count()).toBe(4)
    expect(await visibleRows(page).count()).toBe(4)

    await page.locator('vega-job-devtools [data-task-id="1"]').click()
    const link = page.locator('vega-job-devtools [data-details] [data-link="cancelledBy"]')
    expect(await link.getAttribute('data-task-link')).toBe('2')
    await link.click()
    await expect
      .poll(() =>
        page.locator('vega-job-devtools [data-details]').getAttribute('data-selected-task'),
      )
      .toBe('2')
    expect(
      await page.locator('vega-job-devtools [data-task-id="2"]').getAttribute('class'),
    ).toContain('selected')
    await page.close()
  })

  it('the gap banner shows the exact number of lost events', async () => {
    const page = await openApp()
    await page.evaluate(async (text) => {
      const { vega } = window as unknown as { vega: VegaGlobals }
      const panel = vega.devtools.mountDevtools({ open: true })
      panel.load(text)
      await panel.ready()
    }, readGolden('overflow-gap'))
    const banner = page.locator('vega-job-devtools [data-gap]')
    await expect.poll(() => banner.isVisible()).toBe(true)
    expect(await banner.textContent()).toContain('11 events lost in gaps')
    expect(await banner.getAttribute('data-gap')).toBe('11')
    await page.close()
  })

  it('a live port with a silent jump in seq: the banner counts the missing envelopes', async () => {
    const page = await openApp()
    const lost = await page.evaluate(async (text) => {
      const { vega } = window as unknown as { vega: VegaGlobals }
      const envelopes = vega.protocol.parseNdjson(text)
      const channel = new MessageChannel()
      const panel = vega.devtools.mountDevtools({ source: channel.port2, open: true })
      const missing = envelopes.filter((e) => e.seq >= 6 && e.seq <= 9)
      channel.port1.postMessage(envelopes.filter((e) => !missing.includes(e)))
      await panel.ready()
      return missing.length
    }, readGolden('serialize'))
    const banner = page.locator('vega-job-devtools [data-gap]')
    await expect.poll(() => banner.getAttribute('data-gap')).toBe(String(lost))
    expect(await banner.textContent()).toContain(`${lost} events lost in gaps`)
    await page.close()
  })

  it('retention trims with a banner, and settled counts keep the trimmed tasks', async () => {
    const page = await openApp()
    await page.evaluate(async (text) => {
      const { vega } = window as unknown as { vega: VegaGlobals }
      const panel = vega.devtools.mountDevtools({ open: true, retention: { tasks: 2 } })
      panel.load(text)
      await panel.ready()
    }, readGolden('restart'))
    const banner = page.locator('vega-job-devtools [data-gap]')
    await expect.poll(() => banner.textContent()).toContain('2 tasks trimmed by retention')
    expect(await page.locator('vega-job-devtools [data-count="cancelled"]').textContent()).toBe('3')
    expect(await rows(page).count()).toBe(2)
    await page.close()
  })

  it('NDJSON via load() with a broken line: the line number is shown, every good envelope kept', async () => {
    const page = await openApp()
    const lines = readGolden('dedupe').trimEnd().split('\n')
    const broken = [...lines.slice(0, 2), '{"proto":"vega-job", broken', ...lines.slice(2)].join(
      '\n',
    )
    const result = await page.evaluate(async (text) => {
      const { vega } = window as unknown as { vega: VegaGlobals }
      const panel = vega.devtools.mountDevtools({ open: true })
      const loaded = panel.load(text)
      await panel.ready()
      return loaded
    }, broken)
    expect(result.envelopes).toBe(lines.length)
    expect(result.errors.map((error) => error.line)).toEqual([3])
    const banner = page.locator('vega-job-devtools [data-load-errors]')
    expect(await banner.textContent()).toContain('line 3')
    await expect.poll(() => rows(page).count()).toBe(4)
    await page.close()
  })

  it('export NDJSON writes the session back, byte for byte', async () => {
    const page = await openApp()
    const recording = readGolden('serialize')
    await page.evaluate(async (text) => {
      const { vega } = window as unknown as { vega: VegaGlobals }
      const panel = vega.devtools.mountDevtools({ open: true })
      panel.load(text)
      await panel.ready()
    }, recording)
    const [download] = await Promise.all([
      page.waitForEvent('download'),
      page.locator('vega-job-devtools button[data-action="export"]').click(),
    ])
    expect(download.suggestedFilename()).toBe('golden-serialize.ndjson')
    const path = await download.path()
    expect(readFileSync(path, 'utf8')).toBe(recording)
    await page.close()
  })

  it('NDJSON via the file input and via drag-and-drop', async () => {
    const page = await openApp()
    await page.evaluate(async () => {
      const { vega } = window as unknown as { vega: VegaGlobals }
      await vega.devtools.mountDevtools({ open: true }).ready()
    })
    await page.locator('vega-job-devtools input[data-load-file]').setInputFiles({
      name: 'exhaust.ndjson',
      mimeType: 'application/x-ndjson',
      buffer: Buffer.from(readGolden('exhaust')),
    })
    await expect.poll(() => rows(page).count()).toBe(4)
    const dataTransfer = await page.evaluateHandle((text) => {
      const transfer = new DataTransfer()
      transfer.items.add(new File([text], 'restart.ndjson', { type: 'application/x-ndjson' }))
      return transfer
    }, readGolden('restart'))
    await page.locator('vega-job-devtools [data-panel]').dispatchEvent('drop', { dataTransfer })
    // Two recordings, and the option to see both side by side.
    await expect
      .poll(() => page.locator('vega-job-devtools select[data-session] option').count())
      .toBe(3)
    await expect
      .poll(() => page.locator('vega-job-devtools select[data-session]').inputValue())
      .toContain('golden-restart')
    await page.close()
  })
})

describe('isolation', () => {
  it('hostile host CSS changes nothing inside the panel', async () => {
    const page = await openApp()
    await page.evaluate(async (text) => {
      const { vega } = window as unknown as { vega: VegaGlobals }
      const panel = vega.devtools.mountDevtools({ open: true })
      panel.load(text)
      await panel.ready()
    }, readGolden('restart'))
    const measure = () =>
      page.evaluate(() => {
        const host = document.querySelector('vega-job-devtools') as HTMLElement
        const root = host.shadowRoot as ShadowRoot
        const selectors = [
          '[data-panel]',
          'header',
          'button',
          'select',
          '[data-count]',
          '[data-task-id]',
          '[data-log]',
          'canvas',
        ]
        const props = [
          'display',
          'position',
          'font-size',
          'font-family',
          'color',
          'background-color',
          'padding-top',
          'border-top-width',
          'width',
          'height',
        ]
        const styles = selectors.map((selector) => {
          const node = root.querySelector(selector) as Element
          const style = getComputedStyle(node)
          return [selector, props.map((prop) => style.getPropertyValue(prop))]
        })
        const box = host.getBoundingClientRect()
        return {
          styles,
          host: [box.x, box.y, box.width, box.height],
          hostDisplay: getComputedStyle(host).display,
        }
      })
    const before = await measure()
    await page.addStyleTag({ content: '* { all: unset !important; font-size: 40px !important }' })
    await page.evaluate(() => new Promise(requestAnimationFrame))
    const after = await measure()
    // The page's own text did change: the hostile sheet is in effect.
    expect(await page.$eval('h1', (node) => getComputedStyle(node).fontSize)).toBe('40px')
    expect(after).toEqual(before)
    await page.close()
  })
})

describe('a second tab over BroadcastChannel', () => {
  it('shows the app tab’s runtime as one session with every task', async () => {
    const app = await openApp()
    const devtoolsTab = await openApp()
    await devtoolsTab.evaluate(async () => {
      const { vega } = window as unknown as { vega: VegaGlobals }
      await vega.devtools
        .mountDevtools({ source: { broadcast: 'vega-job-e2e' }, open: true })
        .ready()
    })
    const created = await app.evaluate(async () => {
      const { vega } = window as unknown as { vega: VegaGlobals }
      const runtime = vega.newRuntime('app-tab')
      const seen = vega.countCreated(runtime)
      vega.protocol.connectDevtools(
        runtime,
        vega.protocol.createBroadcastChannelTransport('vega-job-e2e'),
      )
      await vega.restartBurst(runtime, 4, 10)
      await vega.restartBurst(runtime, 2, 10)
      return seen.created
    })
    await expect.poll(() => rows(devtoolsTab).count()).toBe(created)
    const options = await devtoolsTab
      .locator('vega-job-devtools select[data-session] option')
      .allTextContents()
    expect(options).toHaveLength(1)
    expect(options[0]).toContain('app-tab')
    await saveScreenshot(devtoolsTab, 'panel-second-tab')
    await app.close()
    await devtoolsTab.close()
  })
})

interface VegaGlobals {
  readonly core: typeof import('@vega/job-core')
  readonly coordination: typeof import('@vega/job-coordination')
  readonly protocol: typeof import('@vega/job-devtools-protocol')
  readonly devtools: typeof import('../src/index.js')
  newRuntime(name: string): import('@vega/job-core').Runtime
  countCreated(runtime: import('@vega/job-core').Runtime): { readonly created: number }
  restartBurst(
    runtime: import('@vega/job-core').Runtime,
    calls: number,
    ms: number,
  ): Promise<number[]>
}
