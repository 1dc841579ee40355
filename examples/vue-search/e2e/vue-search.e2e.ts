// The example in headless Chromium: Debian's /usr/bin/chromium driven by
// playwright-core, never a downloaded browser. The same scenario runs on
// Vite's dev server (Vue's development build, whose warnings fail the test)
// and on the production build served by `vite preview`. Every request that
// is not for 127.0.0.1 is refused: the page works offline.
import { existsSync, mkdirSync } from 'node:fs'
import type { AddressInfo } from 'node:net'
import { fileURLToPath } from 'node:url'
import { keepOffline, launchChromium } from '@vega/browser'
import type { Browser, Page } from 'playwright-core'
import { createServer, preview } from 'vite'
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest'

const ROOT = fileURLToPath(new URL('../', import.meta.url))
const CONFIG = fileURLToPath(new URL('../vite.config.ts', import.meta.url))
const DOCS = fileURLToPath(new URL('../../../docs/', import.meta.url))
// Long enough that a step the test takes "mid-task" is mid-task on a busy machine.
const LATENCY = 3_000

interface Served {
  readonly url: string
  close(): Promise<void>
}

function urlOf(server: { address(): AddressInfo | string | null } | null | undefined): string {
  const address = server?.address()
  if (address === null || address === undefined || typeof address === 'string') {
    throw new Error('the server has no TCP address')
  }
  return `http://127.0.0.1:${address.port}/`
}

async function devServer(): Promise<Served> {
  const server = await createServer({
    configFile: CONFIG,
    root: `${ROOT}web`,
    logLevel: 'error',
    server: { port: 0, strictPort: false },
  })
  await server.listen()
  return { url: urlOf(server.httpServer), close: () => server.close() }
}

async function productionBuild(): Promise<Served> {
  if (!existsSync(`${ROOT}dist/index.html`)) {
    throw new Error(
      'dist/index.html is missing: run `pnpm test:e2e` from the root, which builds first.',
    )
  }
  const server = await preview({
    configFile: CONFIG,
    root: `${ROOT}web`,
    logLevel: 'error',
    preview: { port: 0, strictPort: false },
  })
  return {
    url: urlOf(server.httpServer),
    close: () => new Promise<void>((resolve) => server.httpServer.close(() => resolve())),
  }
}

let browser: Browser

beforeAll(async () => {
  browser = await launchChromium()
})

afterAll(async () => {
  await browser?.close()
})

describe.each([
  // The footer's useCounts and useRuntimeEvent share one bus listener; the
  // Performance panel tracks are one more in development, none in production.
  ['the dev server', devServer, { listeners: 2 }, true],
  ['the production build', productionBuild, { listeners: 1 }, false],
] as const)('the Vue example on %s', (_name, serve, SETTLED, tracks) => {
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
      if (message.type() === 'error' || message.type() === 'warning') problems.push(message.text())
    })
    const offline = await keepOffline(page)
    await page.goto(`${served.url}?latency=${LATENCY}#/search`)

    // Typing: four keystrokes, four searches; each restarts the one before.
    await page.getByTestId('query').pressSequentially('lyra')

    // Two rows and the preview: documents 1 and 9, the preview shares row 1's request.
    await expect
      .poll(rows, { timeout: 30_000 })
      .toEqual(['Vega, the brightest star in Lyra', 'Lyra, a small constellation'])
    await expect(page.getByTestId('preview').textContent()).resolves.toContain('Vega, the')
    expect(await requests()).toMatchObject({ search: 4, answered: 1, doc: 2 })
    await expect.poll(sizes, { timeout: 30_000 }).toEqual(SETTLED)
    if (process.env.SCREENSHOTS === '1' && tracks) {
      mkdirSync(DOCS, { recursive: true })
      await page.screenshot({ path: `${DOCS}vue-search.png` })
    }

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
    await expect
      .poll(() => page.getByTestId('save-state').textContent(), { timeout: 30_000 })
      .toBe('saved version 1 (10 chars)')
    expect(await requests()).toMatchObject({ save: 1 })

    // A route change while a save runs: the save is kept ('keep') and finishes.
    await page.getByTestId('draft').fill('hello again')
    await save.click()
    await expect.poll(live, { timeout: 30_000 }).toBe(1)
    await page.getByTestId('to-search').click()
    await expect.poll(sizes, { timeout: 30_000 }).toEqual(SETTLED)
    expect(await requests()).toMatchObject({ save: 2 })
    expect(await page.getByTestId('counts').textContent()).toBe('0 running · 0 waiting · 0 live')

    expect(problems).toEqual([])
    expect(offline).toEqual([])
  })
})
