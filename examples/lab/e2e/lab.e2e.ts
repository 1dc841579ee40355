// The web lab (the built-in coordinators, and two written by hand) in headless Chromium: Debian's
// /usr/bin/chromium driven by playwright-core, never a downloaded browser.
// The page is the production build (dist/web), served on loopback; every
// request that is not for 127.0.0.1 is refused, so the page must work offline.
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs'
import { dirname } from 'node:path'
import { fileURLToPath } from 'node:url'
import { type FileServer, keepOffline, launchChromium, serveStatic } from '@vega/browser'
import type { Browser, Page } from 'playwright-core'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'

const WEB = fileURLToPath(new URL('../dist/web/', import.meta.url))
const SCREENSHOT = fileURLToPath(new URL('../../../docs/lab-web.png', import.meta.url))

interface Row {
  readonly call: string
  readonly state: string
  readonly reason: string
  readonly by: string
  readonly promise: string
}

interface LogRow {
  readonly type: string
  readonly coordinator: string
  readonly intent: string
}

interface Shown {
  readonly coordinator: string
  readonly executions: string
  readonly duration: string
  readonly rows: readonly Row[]
  readonly log: readonly LogRow[]
}

let server: FileServer
let browser: Browser
let page: Page
const pageErrors: string[] = []
let offline: string[] = []

beforeAll(async () => {
  if (!existsSync(`${WEB}index.html`)) {
    throw new Error(
      `${WEB}index.html is missing: run \`pnpm test:e2e\` from the root, which builds first.`,
    )
  }
  server = await serveStatic(WEB)
  browser = await launchChromium()
  page = await browser.newPage({ viewport: { width: 1280, height: 900 } })
  page.on('pageerror', (error) => pageErrors.push(String(error)))
  page.on('console', (message) => {
    if (message.type() === 'error') pageErrors.push(message.text())
  })
  offline = await keepOffline(page)
  await page.goto(server.url)
})

afterAll(async () => {
  await browser?.close()
  await server?.close()
})

type Section = 'built-ins' | 'custom'

/** Fires one section and waits until the page says it is done; returns what the page shows. */
async function fire(figure: Section): Promise<Shown> {
  const result = page.locator(`#result-${figure}`)
  await page.locator(`#fire-${figure}`).click()
  await expect.poll(() => result.getAttribute('data-state'), { timeout: 30_000 }).toBe('done')
  return read(figure)
}

async function read(figure: Section): Promise<Shown> {
  return page.locator(`#result-${figure}`).evaluate((root) => {
    const text = (element: Element | null) => element?.textContent?.trim() ?? ''
    return {
      coordinator: text(root.querySelector('[data-testid="coordinator"]')),
      executions: text(root.querySelector('[data-testid="executions"]')),
      duration: text(root.querySelector('[data-testid="duration"]')),
      rows: [...root.querySelectorAll('.lanes tbody tr')].map((row) => ({
        call: row.getAttribute('data-call') ?? '',
        state: text(row.querySelector('[data-field="state"]')),
        reason: text(row.querySelector('[data-field="reason"]')),
        by: text(row.querySelector('[data-field="cancelled-by"]')),
        promise: text(row.querySelector('[data-field="promise"]')),
      })),
      log: [...root.querySelectorAll('.log tbody tr')].map((row) => ({
        type: row.getAttribute('data-type') ?? '',
        coordinator: row.getAttribute('data-coordinator') ?? '',
        intent: row.getAttribute('data-intent') ?? '',
      })),
    }
  })
}

const row = (call: number, state: string, promise: string, reason = '', by = ''): Row => ({
  call: String(call),
  state,
  reason,
  by,
  promise,
})

const logRow = (type: string, coordinator: string, intent: number): LogRow => ({
  type: `coordination:${type}`,
  coordinator,
  intent: String(intent),
})

async function setDuration(ms: number): Promise<void> {
  await page.getByLabel('Body duration').fill(String(ms))
  await expect.poll(() => page.locator('#duration-value').textContent()).toBe(`${ms} ms`)
}

async function pick(strategy: string): Promise<void> {
  await page.getByRole('radio', { name: strategy, exact: true }).check()
}

describe('the web lab', () => {
  it('is accessible markup: landmarks, labelled controls, named buttons', async () => {
    await expect
      .poll(() => page.getByRole('region').evaluateAll((regions) => regions.map((r) => r.id)))
      .toEqual(['built-ins', 'custom'])
    const unlabelled = await page
      .locator('input')
      .evaluateAll(
        (inputs) =>
          (inputs as HTMLInputElement[]).filter((input) => (input.labels?.length ?? 0) === 0)
            .length,
      )
    expect(unlabelled).toBe(0)
    expect(await page.getByRole('button', { name: 'Fire 4 calls' }).count()).toBe(2)
    expect(await page.getByRole('radio').count()).toBe(8)
  })

  it('explains itself without outside references: why merged calls resolve, what each coordinator is for', async () => {
    const body = (await page.locator('body').textContent()) ?? ''
    expect(body).not.toMatch(/Fig\.|§|coordination\.md/)
    expect((await page.locator('#merged-note').textContent())?.replace(/\s+/g, ' ')).toContain(
      'its promise can still resolve with the other call',
    )
    const explain = page.locator('#explain-built-ins')
    for (const [strategy, words] of [
      ['none', 'every call runs its own body'],
      ['dedupe', 'Use it for reads'],
      ['restart', 'search-as-you-type'],
      ['serialize', 'one at a time per key, in call order'],
      ['exhaust', 'submit button'],
      ['keepLatest', 'autosave'],
    ] as const) {
      await pick(strategy)
      await expect.poll(() => explain.textContent()).toContain(words)
    }
    const custom = page.locator('#explain-custom')
    await pick('forgetful')
    await expect.poll(() => custom.textContent()).toContain('orphan guard')
    await pick('bounded(limit)')
    await page.getByRole('spinbutton', { name: 'Limit' }).fill('3')
    await expect.poll(() => custom.textContent()).toContain('at most 3 bodies per key')
    // The legend comes before the first lane.
    await pick('none')
    await setDuration(10)
    await fire('built-ins')
    const order = await page
      .locator('#result-built-ins')
      .evaluate((root) => [...root.children].map((child) => child.className))
    expect(order.indexOf('legend')).toBeLessThan(order.indexOf('lanes'))
  })

  describe('four calls on one key: the built-in coordinators', () => {
    it('changes the body duration with the slider', async () => {
      await setDuration(100)
      expect(await page.getByLabel('Body duration').inputValue()).toBe('100')
    })

    it('none: 4 executions, success ×4, each call its own value', async () => {
      await pick('none')
      const shown = await fire('built-ins')
      expect(shown.coordinator).toBe('none')
      expect(shown.duration).toBe('100 ms')
      expect(shown.executions).toBe('4')
      expect(shown.rows).toEqual([
        row(1, 'success', 'resolved 1'),
        row(2, 'success', 'resolved 2'),
        row(3, 'success', 'resolved 3'),
        row(4, 'success', 'resolved 4'),
      ])
      expect(shown.log).toEqual([])
    })

    it('dedupe: 1 execution, cancelled dedupe ×3, every promise gets #1’s value', async () => {
      await pick('dedupe')
      const shown = await fire('built-ins')
      expect(shown.executions).toBe('1')
      expect(shown.rows).toEqual([
        row(1, 'success', 'resolved 1'),
        row(2, 'cancelled', 'resolved 1', 'dedupe', '#1'),
        row(3, 'cancelled', 'resolved 1', 'dedupe', '#1'),
        row(4, 'cancelled', 'resolved 1', 'dedupe', '#1'),
      ])
      expect(shown.log).toEqual([
        logRow('reuse', 'dedupe', 2),
        logRow('reuse', 'dedupe', 3),
        logRow('reuse', 'dedupe', 4),
      ])
    })

    it('restart: 4 executions, cancelled abort ×3 each by the next call, the last succeeds', async () => {
      await pick('restart')
      const shown = await fire('built-ins')
      expect(shown.executions).toBe('4')
      expect(shown.rows).toEqual([
        row(1, 'cancelled', 'rejected CancelledError (abort)', 'abort', '#2'),
        row(2, 'cancelled', 'rejected CancelledError (abort)', 'abort', '#3'),
        row(3, 'cancelled', 'rejected CancelledError (abort)', 'abort', '#4'),
        row(4, 'success', 'resolved 4'),
      ])
      expect(shown.log).toEqual([
        logRow('restart', 'restart', 2),
        logRow('restart', 'restart', 3),
        logRow('restart', 'restart', 4),
      ])
    })

    it('serialize: 4 executions one after another, success ×4, queued ×3', async () => {
      await pick('serialize')
      const shown = await fire('built-ins')
      expect(shown.executions).toBe('4')
      expect(shown.rows).toEqual([
        row(1, 'success', 'resolved 1'),
        row(2, 'success', 'resolved 2'),
        row(3, 'success', 'resolved 3'),
        row(4, 'success', 'resolved 4'),
      ])
      expect(shown.log).toEqual([
        logRow('queued', 'serialize', 2),
        logRow('queued', 'serialize', 3),
        logRow('queued', 'serialize', 4),
      ])
    })

    it('exhaust: 1 execution, cancelled exhaust-dropped ×3, those promises reject, coordination:dropped ×3', async () => {
      await pick('exhaust')
      const shown = await fire('built-ins')
      expect(shown.executions).toBe('1')
      expect(shown.rows).toEqual([
        row(1, 'success', 'resolved 1'),
        row(2, 'cancelled', 'rejected CancelledError (exhaust-dropped)', 'exhaust-dropped'),
        row(3, 'cancelled', 'rejected CancelledError (exhaust-dropped)', 'exhaust-dropped'),
        row(4, 'cancelled', 'rejected CancelledError (exhaust-dropped)', 'exhaust-dropped'),
      ])
      expect(shown.log).toEqual([
        logRow('dropped', 'exhaust', 2),
        logRow('dropped', 'exhaust', 3),
        logRow('dropped', 'exhaust', 4),
      ])
    })

    it('keepLatest: 2 executions (#1, then #4), #2 and #3 superseded, resolving to #4’s value', async () => {
      await pick('keepLatest')
      const shown = await fire('built-ins')
      expect(shown.executions).toBe('2')
      expect(shown.rows).toEqual([
        row(1, 'success', 'resolved 1'),
        row(2, 'cancelled', 'resolved 4', 'superseded', '#3'),
        row(3, 'cancelled', 'resolved 4', 'superseded', '#4'),
        row(4, 'success', 'resolved 4'),
      ])
      expect(shown.log).toEqual([
        logRow('queued', 'keepLatest', 2),
        logRow('queued', 'keepLatest', 3),
        logRow('queued', 'keepLatest', 4),
      ])
    })

    it('shows the lanes live while the calls run, with the new duration', async () => {
      await setDuration(400)
      await pick('serialize')
      const result = page.locator('#result-built-ins')
      await page.locator('#fire-built-ins').click()
      // 4 × 400 ms in a queue: #4 waits parked for 1.2 s, long enough to be seen mid-run.
      await expect
        .poll(async () => ({
          figure: await result.getAttribute('data-state'),
          last: await result.locator('tr[data-call="4"] [data-field="state"]').textContent(),
        }))
        .toEqual({ figure: 'running', last: 'parked:coordinator' })
      await expect.poll(() => result.getAttribute('data-state'), { timeout: 30_000 }).toBe('done')
      const shown = await read('built-ins')
      expect(shown.duration).toBe('400 ms')
      expect(shown.executions).toBe('4')
      expect(shown.rows.map((r) => r.state)).toEqual(['success', 'success', 'success', 'success'])
      // The drawn lane of #4: parked behind the others, then its own run, then the end.
      const track = await result.locator('tr[data-call="4"] .track').getAttribute('aria-label')
      expect(track?.replace(/\d+/g, 'N')).toBe(
        'idle N–N ms, parked:coordinator N–N ms, queued N–N ms, running N–N ms, success at N ms',
      )
      expect(await result.locator('tr[data-call="4"] .segment').count()).toBe(3)
    })
  })

  describe('your own coordinator: bounded(limit) and forgetful', () => {
    it('bounded(1) is the dedupe row, cell for cell, stamped "bounded"', async () => {
      await setDuration(100)
      await pick('bounded(limit)')
      await page.getByRole('spinbutton', { name: 'Limit' }).fill('1')
      const shown = await fire('custom')
      expect(shown.coordinator).toBe('bounded(1)')
      expect(shown.executions).toBe('1')
      expect(shown.rows).toEqual([
        row(1, 'success', 'resolved 1'),
        row(2, 'cancelled', 'resolved 1', 'dedupe', '#1'),
        row(3, 'cancelled', 'resolved 1', 'dedupe', '#1'),
        row(4, 'cancelled', 'resolved 1', 'dedupe', '#1'),
      ])
      expect(shown.log).toEqual([
        logRow('reuse', 'bounded', 2),
        logRow('reuse', 'bounded', 3),
        logRow('reuse', 'bounded', 4),
      ])
    })

    it('forgetful: 0 executions, cancelled orphaned-intent ×4, promises resolve to undefined', async () => {
      await pick('forgetful')
      expect(await page.getByRole('spinbutton', { name: 'Limit' }).isDisabled()).toBe(true)
      const shown = await fire('custom')
      expect(shown.coordinator).toBe('forgetful')
      expect(shown.executions).toBe('0')
      expect(shown.rows).toEqual([
        row(1, 'cancelled', 'resolved undefined', 'orphaned-intent'),
        row(2, 'cancelled', 'resolved undefined', 'orphaned-intent'),
        row(3, 'cancelled', 'resolved undefined', 'orphaned-intent'),
        row(4, 'cancelled', 'resolved undefined', 'orphaned-intent'),
      ])
      expect(shown.log).toEqual([
        logRow('orphaned-intent', 'forgetful', 1),
        logRow('orphaned-intent', 'forgetful', 2),
        logRow('orphaned-intent', 'forgetful', 3),
        logRow('orphaned-intent', 'forgetful', 4),
      ])
    })

    it('bounded(2): 2 executions, #3 and #4 reuse #1', async () => {
      await setDuration(400)
      await pick('bounded(limit)')
      await page.getByRole('spinbutton', { name: 'Limit' }).fill('2')
      const shown = await fire('custom')
      expect(shown.coordinator).toBe('bounded(2)')
      expect(shown.executions).toBe('2')
      expect(shown.rows).toEqual([
        row(1, 'success', 'resolved 1'),
        row(2, 'success', 'resolved 2'),
        row(3, 'cancelled', 'resolved 1', 'dedupe', '#1'),
        row(4, 'cancelled', 'resolved 1', 'dedupe', '#1'),
      ])
      expect(shown.log).toEqual([logRow('reuse', 'bounded', 3), logRow('reuse', 'bounded', 4)])
    })
  })

  it('the devtools panel (the Devtools button) shows each fire as a session, one lane per call', async () => {
    await setDuration(50)
    await pick('restart')
    await fire('built-ins')
    await page.locator('#toggle-devtools').click()
    // The newest session is shown (the picker's last option is every session side by side).
    const picker = page.locator('vega-job-devtools select[data-session]')
    await expect.poll(() => picker.locator('option').count()).toBeGreaterThan(2)
    const options = await picker.locator('option').allTextContents()
    expect(options.at(-1)).toBe(`all ${options.length - 1} sessions, side by side`)
    await expect
      .poll(() => picker.inputValue())
      .toBe(
        await picker
          .locator('option')
          .nth(options.length - 2)
          .getAttribute('value'),
      )
    await expect.poll(() => page.locator('vega-job-devtools [data-task-id]').count()).toBe(4)
    await expect
      .poll(() => page.locator('vega-job-devtools [data-count="cancelled"]').textContent())
      .toBe('3')
    await page.locator('#toggle-devtools').click()
    expect(await page.locator('vega-job-devtools').isVisible()).toBe(false)
  })

  it('marks a result stale when a control changes, and unmarks it when they agree again', async () => {
    await setDuration(50)
    await pick('dedupe')
    await fire('built-ins')
    const result = page.locator('#result-built-ins')
    await pick('restart')
    expect(await result.getAttribute('data-stale')).toBe('true')
    const note = result.locator('[data-testid="stale"]')
    expect(await note.textContent()).toBe(
      'Stale: this result is for dedupe, body 50 ms; the controls now say restart, body 50 ms. Press Fire to run it.',
    )
    // The result under the note is still the one it names, dimmed.
    expect((await read('built-ins')).coordinator).toBe('dedupe')
    expect(
      await result.locator('.lanes').evaluate((element) => getComputedStyle(element).opacity),
    ).toBe('0.45')
    await pick('dedupe')
    expect(await result.getAttribute('data-stale')).toBe(null)
    // The result redraws on its next frame.
    await expect.poll(() => note.count()).toBe(0)
    // The duration is shared: changing it makes every shown result stale.
    await setDuration(60)
    await expect.poll(() => note.textContent()).toContain('the controls now say dedupe, body 60 ms')
    await setDuration(50)
    // The result redraws on its next frame.
    await expect.poll(() => note.count()).toBe(0)
    // Firing runs what the controls say, and the note goes.
    await pick('restart')
    const shown = await fire('built-ins')
    expect(shown.coordinator).toBe('restart')
    expect(await result.getAttribute('data-stale')).toBe(null)
  })

  it('disables every control while a run goes, so they cannot disagree with it', async () => {
    await setDuration(300)
    await pick('serialize')
    const result = page.locator('#result-built-ins')
    await page.locator('#fire-built-ins').click()
    expect(await result.getAttribute('data-state')).toBe('running')
    const enabled = () =>
      page
        .locator('.controls input, .controls button')
        .evaluateAll((controls) =>
          (controls as HTMLInputElement[])
            .filter((control) => !control.disabled)
            .map((c) => c.id || c.value),
        )
    expect(await enabled()).toEqual([])
    await expect.poll(() => result.getAttribute('data-state'), { timeout: 30_000 }).toBe('done')
    // Enabled again; the limit only while bounded(limit) is picked.
    expect(await page.locator('#duration').isDisabled()).toBe(false)
    expect(await page.locator('#fire-custom').isDisabled()).toBe(false)
    await pick('forgetful')
    expect(await page.locator('#limit').isDisabled()).toBe(true)
    await pick('bounded(limit)')
    expect(await page.locator('#limit').isDisabled()).toBe(false)
  })

  it('the Devtools button opens the latest run; the panel and the page draw states from one palette', async () => {
    await setDuration(50)
    await pick('restart')
    await fire('built-ins')
    await pick('none')
    await fire('built-ins')
    await page.locator('#toggle-devtools').click()
    // No session picked: the panel shows the newest, the `none` run (4 successes, none cancelled).
    await expect
      .poll(() => page.locator('vega-job-devtools [data-count="success"]').textContent())
      .toBe('4')
    expect(await page.locator('vega-job-devtools [data-count="cancelled"]').textContent()).toBe('0')
    const picker = page.locator('vega-job-devtools select[data-session]')
    const count = await picker.locator('option').count()
    expect(await picker.inputValue()).toBe(
      await picker
        .locator('option')
        .nth(count - 2)
        .getAttribute('value'),
    )
    const swatches = await page.evaluate(() => {
      const background = (element: Element | null | undefined) =>
        element === null || element === undefined ? '' : getComputedStyle(element).backgroundImage
      const panel = document.querySelector('vega-job-devtools')?.shadowRoot
      return {
        page: background(
          document.querySelector('#result-built-ins [data-legend-state="parked"] .swatch'),
        ),
        panel: background(panel?.querySelector('[data-legend-state="parked"] .swatch')),
      }
    })
    expect(swatches.page).toContain('repeating-linear-gradient')
    expect(swatches.page).toContain('rgb(224, 165, 38)')
    expect(swatches.panel).toBe(swatches.page)
    await page.locator('#toggle-devtools').click()
    expect(await page.locator('vega-job-devtools').isVisible()).toBe(false)
  })

  // The README's screenshot is tracked: it is rewritten only when asked
  // (`pnpm screenshots`, which sets SCREENSHOTS=1), so a test run leaves the
  // working tree as it found it.
  it('renders the page as an image; writes docs/lab-web.png only with SCREENSHOTS=1', async () => {
    // The README's figure: serialize (the queue, parked hatched) and bounded(2), both current.
    await setDuration(200)
    await pick('serialize')
    await fire('built-ins')
    await pick('bounded(limit)')
    await page.locator('#limit').fill('2')
    await fire('custom')
    expect(await page.locator('[data-stale]').count()).toBe(0)
    const image = await page.screenshot({ fullPage: true })
    expect(image.subarray(1, 4).toString('latin1')).toBe('PNG')
    expect(image.length).toBeGreaterThan(10_000)
    if (process.env.SCREENSHOTS === '1') {
      mkdirSync(dirname(SCREENSHOT), { recursive: true })
      writeFileSync(SCREENSHOT, image)
      expect(readFileSync(SCREENSHOT).equals(image)).toBe(true)
    }
  })

  it('made no request off the machine and logged no error', () => {
    expect(offline).toEqual([])
    expect(pageErrors).toEqual([])
  })
})
