// The example's tasks in Chrome's Performance panel: a trace recorded
// through the DevTools protocol while the app runs a burst (typing fast in
// the search box, the rows loading with dedupe, a triple-click on save), read
// back as the custom track entries the panel draws. On the dev server the
// tracks are installed (web/devtools.ts); the production build gets the
// `/production` entry's no-op and draws none. Every step waits for the page
// to show its outcome, never for time to pass.
import { readdirSync, readFileSync } from 'node:fs'
import { fileURLToPath } from 'node:url'
import { keepOffline, launchChromium, recordTrackEntries, type TrackEntry } from '@vega/browser'
import type { Browser, Page } from 'playwright-core'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { devServer, productionBuild, type Served } from './servers.js'

const ROOT = fileURLToPath(new URL('../', import.meta.url))
// Long enough that every keystroke and click lands while the task before it runs.
const LATENCY = 3_000
// The runtime's name (web/runtime.ts): the track group's name.
const GROUP = 'react-search'
const PART = / · (queued|parked \(\w+\)|retry delay|attempt \d+)$/

let browser: Browser
let served: Served | undefined
let page: Page
let problems: string[] = []
let offline: string[] = []

beforeAll(async () => {
  browser = await launchChromium()
})

afterAll(async () => {
  await browser?.close()
})

/**
 * Closes the page and its server. A trace records every tab of the browser,
 * so one page is open at a time.
 */
async function close(): Promise<void> {
  await page?.close()
  await served?.close()
  expect(problems).toEqual([])
  expect(offline).toEqual([])
}

async function open(serve: () => Promise<Served>): Promise<void> {
  served = await serve()
  page = await browser.newPage()
  problems = []
  page.on('pageerror', (error) => problems.push(String(error)))
  page.on('console', (message) => {
    if (message.type() === 'error') problems.push(message.text())
  })
  offline = await keepOffline(page)
  await page.goto(`${served.url}?latency=${LATENCY}#/search`)
  await page.getByTestId('query').waitFor()
}

/** What the in-memory server received (the footer counts it). */
const requests = () =>
  page.getByTestId('requests').evaluate((element) => ({
    search: Number(element.getAttribute('data-search')),
    answered: Number(element.getAttribute('data-answered')),
    doc: Number(element.getAttribute('data-doc')),
    save: Number(element.getAttribute('data-save')),
  }))

/**
 * The burst, traced: "lyra" typed fast (four searches, each restarting the
 * one before), the two result rows and the preview loading documents 1 and 9
 * (deduped by id), then three clicks on save while the first save runs
 * (exhaust drops the other two). Ends once every task has settled, so every
 * entry is written (an entry is written when it ends).
 */
function tracedBurst(): Promise<TrackEntry[]> {
  // Playwright's waits, not expect.poll: this also runs in a beforeAll.
  const shows = (testId: string, text: string) =>
    page.waitForFunction(
      ([id, expected]) =>
        document.querySelector(`[data-testid="${id}"]`)?.textContent?.includes(expected!) ?? false,
      [testId, text],
      { timeout: 30_000 },
    )
  return recordTrackEntries(page, async () => {
    await page.getByTestId('query').pressSequentially('lyra')
    await shows('results', 'Vega, the brightest star in LyraLyra, a small constellation')
    await shows('preview', 'Vega, the brightest star in Lyra: a short article.')
    await page.getByTestId('to-editor').click()
    await page.getByTestId('draft').fill('hello vega')
    const save = page.getByTestId('save')
    await save.click()
    await save.click()
    await save.click()
    await shows('save-state', 'saved version 1 (10 chars)')
    await page.waitForFunction(() => globalThis.inspectRuntime().sizes.liveTasks === 0, undefined, {
      timeout: 30_000,
    })
    expect(await requests()).toEqual({ search: 4, answered: 1, doc: 2, save: 1 })
  })
}

/** A task's own entry and its waits and attempts (in start order, a 0 ms wait before what it let start). */
interface DrawnTask {
  readonly id: number
  readonly entry: TrackEntry
  readonly parts: readonly TrackEntry[]
}

/** The tasks drawn on `track`, in the order their entries start. */
function tasksOn(entries: readonly TrackEntry[], track: string): DrawnTask[] {
  const onTrack = entries.filter((entry) => entry.devtools.track === track)
  return onTrack
    .filter((entry) => !PART.test(entry.name) && !entry.name.includes(' · body exiting after '))
    .map((entry) => {
      const head = entry.name.split(' · ')[0]!
      return {
        id: Number(head.slice(head.indexOf('#') + 1)),
        entry,
        parts: onTrack
          .filter((part) => PART.test(part.name) && part.name.startsWith(`${head} · `))
          .sort((a, b) => a.start - b.start || a.end - b.end),
      }
    })
}

const ran = (task: DrawnTask) => task.parts.some((part) => / · attempt \d+$/.test(part.name))

describe('the React example on the dev server', () => {
  let entries: TrackEntry[] = []
  let ours: TrackEntry[] = []

  beforeAll(async () => {
    await open(devServer)
    entries = await tracedBurst()
    ours = entries.filter((entry) => entry.devtools.trackGroup === GROUP)
  })

  afterAll(close)

  it('draws the runtime’s track group next to React’s own tracks, a track per coordination key', () => {
    // React's development build draws its scheduler tracks in the same trace.
    expect(entries.some((entry) => entry.devtools.trackGroup === 'Scheduler ⚛')).toBe(true)
    expect(new Set(ours.map((entry) => entry.devtools.track))).toEqual(
      new Set(['"search"', '["doc",1]', '["doc",9]', '"draft"']),
    )
    const labelOf = (entry: TrackEntry) => entry.name.split(' #')[0]
    for (const entry of ours) {
      const expected = { search: '"search"', doc: /^\["doc",[19]\]$/, save: '"draft"' }[
        labelOf(entry) as 'search' | 'doc' | 'save'
      ]
      expect(entry.devtools.track, entry.name).toMatch(expected)
    }
  })

  it('shows the four keystrokes’ searches in order, each restarted by the next, the last one answered', () => {
    const searches = tasksOn(ours, '"search"')
    expect(searches).toHaveLength(4)
    const ids = searches.map((task) => task.id)
    expect([...ids].sort((a, b) => a - b)).toEqual(ids)
    expect(searches.map((task) => task.entry.name)).toEqual([
      `search #${ids[0]} · restarted by #${ids[1]}`,
      `search #${ids[1]} · restarted by #${ids[2]}`,
      `search #${ids[2]} · restarted by #${ids[3]}`,
      `search #${ids[3]}`,
    ])
    expect(searches.map((task) => task.entry.devtools.color)).toEqual([
      'secondary-dark',
      'secondary-dark',
      'secondary-dark',
      'tertiary',
    ])
    const [first] = searches
    expect(first!.entry.devtools.properties).toContainEqual(['cancelled by', `#${ids[1]}`])
    // A search is restarted when the next one is created: it ends where the next begins.
    for (const [index, task] of searches.slice(0, -1).entries()) {
      expect(task.entry.end).toBeLessThanOrEqual(searches[index + 1]!.entry.end)
      expect(task.entry.end).toBeGreaterThanOrEqual(searches[index + 1]!.entry.start)
    }
    // Every search ran (its body slept the network's latency) until restarted.
    expect(searches.every(ran)).toBe(true)
  })

  it('shows one load per document, every other call deduped into it, after the search answered', () => {
    const answered = tasksOn(ours, '"search"').at(-1)!
    for (const track of ['["doc",1]', '["doc",9]']) {
      const docs = tasksOn(ours, track)
      const loads = docs.filter(ran)
      expect(loads, track).toHaveLength(1)
      const [load] = loads
      expect(load!.entry.name).toBe(`doc #${load!.id}`)
      const joiners = docs.filter((task) => task !== load)
      expect(joiners.length, `${track} has deduped calls`).toBeGreaterThan(0)
      for (const joiner of joiners) {
        expect(joiner.entry.name).toBe(`doc #${joiner.id} · deduped into #${load!.id}`)
        expect(joiner.entry.devtools.properties).toContainEqual(['reason', 'dedupe'])
        // Decided at dispatch, while the load ran: no wait, no attempt of its own.
        expect(joiner.parts).toEqual([])
        expect(joiner.entry.start).toBeGreaterThanOrEqual(load!.entry.start)
        expect(joiner.entry.end).toBeLessThanOrEqual(load!.entry.end)
      }
      // The rows exist once the last search answered.
      expect(load!.entry.start).toBeGreaterThanOrEqual(answered.entry.end)
    }
  })

  it('shows the first save running and the two clicks during it dropped by exhaust', () => {
    const saves = tasksOn(ours, '"draft"')
    const ids = saves.map((task) => task.id)
    expect(saves.map((task) => task.entry.name)).toEqual([
      `save #${ids[0]}`,
      `save #${ids[1]} · cancelled (exhaust-dropped)`,
      `save #${ids[2]} · cancelled (exhaust-dropped)`,
    ])
    const [saved, ...dropped] = saves
    for (const task of dropped) {
      expect(task.entry.devtools.tooltipText).toMatch(/reason exhaust-dropped/)
      expect(task.parts).toEqual([])
      expect(task.entry.start).toBeGreaterThanOrEqual(saved!.entry.start)
      expect(task.entry.end).toBeLessThanOrEqual(saved!.entry.end)
    }
    // The editor opened once the documents had loaded.
    const docsEnd = Math.max(
      ...['["doc",1]', '["doc",9]'].flatMap((track) =>
        tasksOn(ours, track).map((t) => t.entry.end),
      ),
    )
    expect(saved!.entry.start).toBeGreaterThanOrEqual(docsEnd)
  })

  it('nests each task’s waits and attempts in its entry, on its track, one after the other', () => {
    const tasks = ['"search"', '["doc",1]', '["doc",9]', '"draft"'].flatMap((track) =>
      tasksOn(ours, track),
    )
    // Every entry of the group is a task's, a part of one, or a cancelled body still exiting.
    const exiting = ours.filter((entry) => entry.name.includes(' · body exiting after '))
    expect(tasks.length + tasks.reduce((sum, t) => sum + t.parts.length, 0) + exiting.length).toBe(
      ours.length,
    )
    for (const task of tasks.filter(ran)) {
      const shown = task.parts.map((part) => part.name.slice(part.name.indexOf(' · ') + 3))
      // Each one that ran waited in the queue (0 ms: no concurrency limit), then ran once.
      expect(shown, task.entry.name).toEqual(['queued', 'attempt 1'])
      let previousEnd = task.entry.start
      for (const part of task.parts) {
        expect(part.devtools.track).toBe(task.entry.devtools.track)
        expect(part.start, `${part.name} after what came before`).toBeGreaterThanOrEqual(
          previousEnd,
        )
        expect(part.end, `${part.name} inside ${task.entry.name}`).toBeLessThanOrEqual(
          task.entry.end,
        )
        previousEnd = part.end
      }
      // An attempt is coloured as its task ended: restarted or answered.
      expect(task.parts[1]!.devtools.color).toBe(task.entry.devtools.color)
    }
    // A restarted search's body exits after its task ended (its slot is held until then).
    for (const entry of exiting) {
      const head = entry.name.split(' · ')[0]
      const task = tasks.find((t) => t.entry.name.startsWith(`${head} · `))
      expect(task?.entry.name, entry.name).toMatch(/ · restarted by #/)
      expect(entry.start).toBeGreaterThanOrEqual(task!.entry.end)
    }
  })
})

describe('the React example’s production build', () => {
  it('runs the same burst and draws no track entry; no built file holds the tracks’ code', async () => {
    await open(productionBuild)
    const entries = await tracedBurst()
    expect(entries.filter((entry) => entry.devtools.trackGroup === GROUP)).toEqual([])
    const assets = `${ROOT}dist/assets/`
    const withTracksCode = readdirSync(assets).filter((file) =>
      readFileSync(`${assets}${file}`, 'utf8').includes('track-entry'),
    )
    expect(withTracksCode).toEqual([])
    await close()
  })
})
