// `vega-job-devtools`: the built server's page in Debian's Chromium, with two
// Node processes connected to its relay. Nothing is fetched from the network.
import type { Browser, Page } from 'playwright-core'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { DevtoolsServer } from '../src/server.js'
import { startProducer } from '../test/support/producers.js'
import { keepOffline, launchChromium, saveScreenshot } from './support/browser.js'

let server: DevtoolsServer
let browser: Browser
let page: Page
const pageErrors: string[] = []
let offline: string[] = []

beforeAll(async () => {
  // The built entry, as `pnpm devtools` runs it.
  const { startDevtoolsServer } = (await import(
    new URL('../dist/server.js', import.meta.url).href
  )) as typeof import('../src/server.js')
  server = await startDevtoolsServer({ port: 0 })
  browser = await launchChromium()
  page = await browser.newPage({ viewport: { width: 1280, height: 800 } })
  page.on('pageerror', (error) => pageErrors.push(String(error)))
  offline = await keepOffline(page)
})

afterAll(async () => {
  await browser?.close()
  await server?.close()
  expect(pageErrors).toEqual([])
  expect(offline).toEqual([])
})

describe('the standalone panel', () => {
  it('shows two Node processes as two sessions, side by side in the picker', async () => {
    await page.goto(server.url)
    await expect
      .poll(() =>
        page.locator('vega-job-devtools [data-connection]').getAttribute('data-connection'),
      )
      .toBe('connected')
    // Empty, the page says how to connect a process to it, with this relay's URL.
    const hint = page.locator('vega-job-devtools [data-empty-hint]')
    expect(await hint.isVisible()).toBe(true)
    const hintText = (await hint.textContent()) ?? ''
    expect(hintText).toContain('Connect a Node process to this panel')
    expect(hintText).toContain(`createWebSocketTransport('${server.relayUrl}`)
    await saveScreenshot(page, 'standalone-empty')
    const first = startProducer(server.relayUrl, 'worker-a', 3)
    const second = startProducer(server.relayUrl, 'worker-b', 4)
    await Promise.all([first.ran, second.ran])
    const options = page.locator('vega-job-devtools select[data-session] option')
    // One option per process, and one for both side by side.
    await expect.poll(() => options.count()).toBe(3)
    const names = await options.allTextContents()
    expect(
      names
        .slice(0, 2)
        .map((name) => name.split(' · ')[0])
        .sort(),
    ).toEqual(['worker-a', 'worker-b'])
    expect(names[2]).toBe('all 2 sessions, side by side')
    const picker = page.locator('vega-job-devtools select[data-session]')
    for (const [runtime, calls] of [
      ['worker-a', 3],
      ['worker-b', 4],
    ] as const) {
      const value = await options.filter({ hasText: runtime }).first().getAttribute('value')
      await picker.selectOption(value ?? '')
      await expect.poll(() => page.locator('vega-job-devtools [data-task-id]').count()).toBe(calls)
      await expect
        .poll(() => page.locator('vega-job-devtools [data-count="success"]').textContent())
        .toBe(String(calls))
    }
    expect(await hint.isVisible()).toBe(false)

    // Side by side: one lane list, each row with its process, coloured apart.
    await picker.selectOption({ label: 'all 2 sessions, side by side' })
    await expect.poll(() => page.locator('vega-job-devtools [data-task-id]').count()).toBe(7)
    await expect
      .poll(() => page.locator('vega-job-devtools [data-count="success"]').textContent())
      .toBe('7')
    const sideBySide = await page
      .locator('vega-job-devtools .row[data-task-id]')
      .evaluateAll((rows) =>
        rows.map((row) => {
          const process = row.querySelector('.process') as HTMLElement
          return {
            session: (row as HTMLElement).dataset.session,
            process: process.textContent,
            color: getComputedStyle(process).color,
            visible: process.offsetWidth > 0,
          }
        }),
      )
    const perProcess = new Map<string, Set<string>>()
    for (const row of sideBySide) {
      expect(row.visible).toBe(true)
      perProcess.set(
        row.process ?? '',
        (perProcess.get(row.process ?? '') ?? new Set()).add(row.color),
      )
    }
    expect([...perProcess.keys()].sort()).toEqual(['worker-a', 'worker-b'])
    expect(sideBySide.filter((row) => row.process === 'worker-a')).toHaveLength(3)
    const colors = [...perProcess.values()].map((set) => [...set])
    expect(colors.every((set) => set.length === 1)).toBe(true)
    expect(colors[0]?.[0]).not.toBe(colors[1]?.[0])
    // Ids repeat across processes: a click selects the row's own task, and the
    // details and the log show that process's session.
    const firstRows = page.locator('vega-job-devtools .row[data-task-id="1"]')
    expect(await firstRows.count()).toBe(2)
    const rowB = firstRows.filter({ hasText: 'worker-b' })
    await rowB.click()
    await expect
      .poll(() =>
        page.locator('vega-job-devtools [data-details]').getAttribute('data-selected-task'),
      )
      .toBe('1')
    const sessionB = await rowB.getAttribute('data-session')
    expect(await page.locator('vega-job-devtools .row.selected').count()).toBe(1)
    expect(await page.locator('vega-job-devtools .row.selected').getAttribute('data-session')).toBe(
      sessionB,
    )
    expect(await page.locator('vega-job-devtools [data-details] h3').textContent()).toBe(
      '#1 worker-b job 1',
    )
    await saveScreenshot(page, 'standalone')
    expect(await first.stop()).toBe(0)
    expect(await second.stop()).toBe(0)
  })
})
