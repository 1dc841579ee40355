// The example in headless Chromium: Debian's /usr/bin/chromium driven by
// playwright-core, never a downloaded browser. The same scenario runs on
// Vite's dev server (React's development build, where StrictMode replays
// every mount) and on the production build served by `vite preview`. Every
// request that is not for 127.0.0.1 is refused: the page works offline.
import { mkdirSync, readdirSync, readFileSync } from 'node:fs'
import { fileURLToPath } from 'node:url'
import { keepOffline, launchChromium } from '@vega/browser'
import type { Browser, Page } from 'playwright-core'
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest'
import { devServer, productionBuild, type Served } from './servers.js'

const ROOT = fileURLToPath(new URL('../', import.meta.url))
const DOCS = fileURLToPath(new URL('../../../docs/', import.meta.url))
// Long enough that a step the test takes "mid-task" is mid-task on a busy machine.
const LATENCY = 3_000

let browser: Browser

beforeAll(async () => {
  browser = await launchChromium()
})

afterAll(async () => {
  await browser?.close()
})

/**
 * The devtools panel in the dev server: Ctrl+Shift+F opens it, and the four
 * searches typed so far are rows (it recorded them while closed); three were
 * restarted away, one answered.
 */
async function checkDevtoolsPanel(page: Page): Promise<void> {
  const panel = page.locator('vega-job-devtools')
  await page.keyboard.press('Control+Shift+F')
  await expect.poll(() => panel.isVisible(), { timeout: 30_000 }).toBe(true)
  await panel.locator('[data-filter="label"]').fill('search')
  const rows = panel.locator('[data-task-id]')
  await expect
    .poll(() => rows.allTextContents(), { timeout: 30_000 })
    .toEqual([
      expect.stringMatching(/search.*cancelled/),
      expect.stringMatching(/search.*cancelled/),
      expect.stringMatching(/search.*cancelled/),
      expect.stringMatching(/search.*success/),
    ])
  // What is on screen is those four rows, not the documents' rows the filter cut.
  expect(await panel.locator('.row:visible').count()).toBe(4)
  // Row ids are the tasks' ids: increasing, in the order the searches started.
  const ids = (await rows.evaluateAll((nodes) =>
    nodes.map((node) => Number((node as HTMLElement).dataset.taskId)),
  )) as number[]
  expect([...ids].sort((a, b) => a - b)).toEqual(ids)
  expect(await panel.locator('[data-gap]').getAttribute('data-gap')).toBe('0')
  if (process.env.SCREENSHOTS === '1') {
    mkdirSync(DOCS, { recursive: true })
    await page.screenshot({ path: `${DOCS}react-search-devtools.png` })
  }
  await page.keyboard.press('Control+Shift+F')
  await expect.poll(() => panel.isVisible()).toBe(false)
}

/**
 * The production build got `@vega/job-devtools/production`: the hotkey does
 * nothing, no element exists, and no built file holds the panel's code.
 */
async function checkNoDevtools(page: Page): Promise<void> {
  await page.keyboard.press('Control+Shift+F')
  expect(
    await page.evaluate(() => ({
      element: document.querySelector('vega-job-devtools') !== null,
      defined: customElements.get('vega-job-devtools') !== undefined,
    })),
  ).toEqual({ element: false, defined: false })
  const assets = `${ROOT}dist/assets/`
  const withPanelCode = readdirSync(assets).filter((file) =>
    readFileSync(`${assets}${file}`, 'utf8').includes('attachShadow'),
  )
  expect(withPanelCode).toEqual([])
}

describe.each([
  // The devtools' bridge and the performance tracks are two more bus
  // listeners on the runtime.
  ['the dev server', devServer, { listeners: 3 }, checkDevtoolsPanel],
  // Every size inspect() reports is zero, but for the JobProvider's one bus
  // listener while the app is mounted.
  ['the production build', productionBuild, { listeners: 1 }, checkNoDevtools],
] as const)('the React example on %s', (_name, serve, SETTLED, checkDevtools) => {
  let served: Served | undefined
  let page: Page
  const problems: string[] = []

  afterEach(async () => {
    await page?.close()
    await served?.close()
  })

  /** The sizes of inspect(runtime) in the page that are not zero. */
  const sizes = () =>
    page.evaluate(() =>
      Object.fromEntries(
        Object.entries(globalThis.inspectRuntime().sizes).filter(([, size]) => size !== 0),
      ),
    )
  const requests = () =>
    page.getByTestId('requests').evaluate((element) => ({
      search: Number(element.getAttribute('data-search')),
      answered: Number(element.getAttribute('data-answered')),
      doc: Number(element.getAttribute('data-doc')),
      save: Number(element.getAttribute('data-save')),
    }))
  const live = async () => Number(await page.getByTestId('counts').getAttribute('data-live'))
  const rows = () => page.getByTestId('results').locator('li').allTextContents()

  it('types, loads rows once, saves once, and leaves nothing behind on a route change', async () => {
    served = await serve()
    page = await browser.newPage()
    page.on('pageerror', (error) => problems.push(String(error)))
    page.on('console', (message) => {
      if (message.type() === 'error') problems.push(message.text())
    })
    const offline = await keepOffline(page)
    await page.goto(`${served.url}?latency=${LATENCY}#/search`)

    // Every value the footer shows while typing, for the check below.
    await page.getByTestId('counts').evaluate((element) => {
      const samples: number[][] = []
      ;(window as unknown as { countSamples: number[][] }).countSamples = samples
      const read = () =>
        samples.push(
          ['data-running', 'data-exiting', 'data-live'].map((name) =>
            Number(element.getAttribute(name)),
          ),
        )
      new MutationObserver(read).observe(element, { attributes: true })
    })
    // Typing: four keystrokes, four searches; each restarts the one before.
    await page.getByTestId('query').pressSequentially('lyra')

    // Two rows and the preview: documents 1 and 9, the preview shares row 1's request.
    await expect
      .poll(rows, { timeout: 30_000 })
      .toEqual(['Vega, the brightest star in Lyra', 'Lyra, a small constellation'])
    await expect(page.getByTestId('preview').textContent()).resolves.toContain('Vega, the')
    expect(await requests()).toMatchObject({ search: 4, answered: 1, doc: 2 })
    await expect.poll(sizes, { timeout: 30_000 }).toEqual(SETTLED)
    // The footer never shows more running than live: a restarted search's
    // body that has not returned yet is "exiting", apart from "running".
    const samples = await page.evaluate(
      () => (window as unknown as { countSamples: number[][] }).countSamples,
    )
    expect(samples.length).toBeGreaterThan(0)
    for (const [running = 0, exiting = 0, live = 0] of samples) {
      expect(running).toBeLessThanOrEqual(live)
      expect(exiting).toBeGreaterThanOrEqual(0)
    }
    await checkDevtools(page)

    // A route change while a search runs: the search page unmounts and cancels it.
    await page.getByTestId('query').pressSequentially(' ')
    await expect.poll(live, { timeout: 30_000 }).toBeGreaterThan(0)
    await page.getByTestId('to-editor').click()
    await expect.poll(sizes, { timeout: 30_000 }).toEqual(SETTLED)
    expect(await requests()).toMatchObject({ search: 5, answered: 1 })

    // Three clicks while the save runs: one request; the other two are dropped.
    await page.getByTestId('draft').fill('hello vega')
    const save = page.getByTestId('save')
    await save.click()
    await save.click()
    await save.click()
    // While it saves, the button and the status both follow the running save,
    // not the dropped clicks (whose tasks are cancelled).
    await expect
      .poll(async () => ({
        button: await save.textContent(),
        status: await page.getByTestId('save-state').textContent(),
      }))
      .toEqual({ button: 'saving…', status: 'saving… · 2 clicks dropped while saving' })
    await expect
      .poll(() => page.getByTestId('save-state').textContent(), { timeout: 30_000 })
      .toBe('saved version 1 (10 chars) · 2 clicks dropped while saving')
    expect(await save.textContent()).toBe('save')
    expect(await requests()).toMatchObject({ save: 1 })

    // A route change while a save runs: the save is kept ('keep') and finishes.
    await page.getByTestId('draft').fill('hello again')
    await save.click()
    await expect.poll(live, { timeout: 30_000 }).toBe(1)
    await page.getByTestId('to-search').click()
    await expect.poll(sizes, { timeout: 30_000 }).toEqual(SETTLED)
    expect(await requests()).toMatchObject({ save: 2 })
    expect(await page.getByTestId('counts').textContent()).toBe(
      '0 running · 0 exiting · 0 waiting · 0 live',
    )

    expect(problems).toEqual([])
    expect(offline).toEqual([])
  })
})
