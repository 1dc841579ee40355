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
    await expect.poll(() => options.count()).toBe(2)
    const names = await options.allTextContents()
    expect(names.map((name) => name.split(' · ')[0]).sort()).toEqual(['worker-a', 'worker-b'])
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
    await saveScreenshot(page, 'standalone')
    expect(await first.stop()).toBe(0)
    expect(await second.stop()).toBe(0)
  })
})
