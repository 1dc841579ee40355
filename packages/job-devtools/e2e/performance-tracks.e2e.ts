// installPerformanceTracks in headless Chromium: a page runs a burst of a
// search page's tasks while the DevTools protocol records a trace
// (Tracing.start / Tracing.end), and the test reads the custom track entries
// back from the trace events: what the Performance panel would draw.
import { type FileServer, recordTrackEntries, type TrackEntry } from '@vega/browser'
import type { Browser, Page } from 'playwright-core'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { keepOffline, launchChromium, saveScreenshot } from './support/browser.js'
import { serveTestPages } from './support/server.js'

interface BurstIds {
  readonly search: readonly number[]
  readonly rows: readonly number[]
  readonly saves: readonly number[]
  readonly load: readonly number[]
}

let server: FileServer
let browser: Browser
let page: Page
let offline: string[] = []
const pageErrors: string[] = []

beforeAll(async () => {
  server = await serveTestPages()
  browser = await launchChromium()
  const context = await browser.newContext({ viewport: { width: 1280, height: 720 } })
  offline = await keepOffline(context)
  page = await context.newPage()
  page.on('pageerror', (error) => pageErrors.push(String(error)))
  page.on('console', (message) => {
    if (message.type() === 'error') pageErrors.push(message.text())
  })
  await page.goto(`${server.url}tracks.html`)
  await page.waitForFunction(() => (window as unknown as { vegaReady?: boolean }).vegaReady)
})

afterAll(async () => {
  await browser?.close()
  await server?.close()
  expect(pageErrors).toEqual([])
  expect(offline).toEqual([])
})

/** Runs `action` while the page is traced; returns the custom track entries the trace holds. */
const traced = (action: () => Promise<unknown>) => recordTrackEntries(page, action)

const property = (entry: TrackEntry | undefined, field: string) =>
  entry?.devtools.properties.find(([name]) => name === field)?.[1]

/** The entry of task #id itself (not of one of its waits or attempts). */
const taskEntry = (entries: readonly TrackEntry[], label: string, id: number) =>
  entries.find(
    (entry) =>
      (entry.name === `${label} #${id}` || entry.name.startsWith(`${label} #${id} · `)) &&
      !/ · (attempt \d+|queued|parked|retry delay|body exiting)/.test(entry.name),
  )

/** The waits and attempts of task #id, in start order (a wait of 0 ms before the attempt it let start). */
const partsOf = (entries: readonly TrackEntry[], label: string, id: number) =>
  entries
    .filter(
      (entry) =>
        / · (attempt \d+|queued|parked \(\w+\)|retry delay)$/.test(entry.name) &&
        entry.name.startsWith(`${label} #${id} · `),
    )
    .sort((a, b) => a.start - b.start || a.end - b.end)

describe('installPerformanceTracks in Chromium', () => {
  let entries: TrackEntry[] = []
  let ids: BurstIds

  beforeAll(async () => {
    expect(
      await page.evaluate(
        () => (window as unknown as { vega: { supported: boolean } }).vega.supported,
      ),
    ).toBe(true)
    entries = await traced(async () => {
      ids = await page.evaluate(() =>
        (window as unknown as { vega: { burst(): Promise<BurstIds> } }).vega.burst(),
      )
    })
  })

  it('draws every entry in the runtime’s track group, one track per key or label', () => {
    expect(entries.length).toBeGreaterThan(0)
    expect(new Set(entries.map((entry) => entry.devtools.trackGroup))).toEqual(
      new Set(['search-page']),
    )
    expect(new Set(entries.map((entry) => entry.devtools.dataType))).toEqual(
      new Set(['track-entry']),
    )
    const trackOf = (label: string) =>
      new Set(
        entries.filter((entry) => entry.name.startsWith(`${label} #`)).map((e) => e.devtools.track),
      )
    expect(trackOf('search')).toEqual(new Set(['"search"']))
    expect(trackOf('row')).toEqual(new Set(['["row",7]']))
    expect(trackOf('save')).toEqual(new Set(['"save"']))
    expect(trackOf('load')).toEqual(new Set(['load']))
    // Plain entries (a usual wait, a success) are cheap timeStamps; the rest carry details.
    expect(new Set(entries.map((entry) => entry.api))).toEqual(new Set(['measure', 'timeStamp']))
    for (const entry of entries) {
      const plain = entry.devtools.color === 'primary-light' || entry.devtools.color === 'tertiary'
      if (entry.api === 'timeStamp') expect(plain, entry.name).toBe(true)
    }
  })

  it('names restarted, deduped and dropped calls as such, with who caused it, coloured by outcome', () => {
    const [v, ve, veg] = ids.search as [number, number, number]
    expect(taskEntry(entries, 'search', v)?.name).toBe(`search #${v} · restarted by #${ve}`)
    expect(taskEntry(entries, 'search', ve)?.name).toBe(`search #${ve} · restarted by #${veg}`)
    expect(taskEntry(entries, 'search', veg)?.name).toBe(`search #${veg}`)
    expect(taskEntry(entries, 'search', veg)?.devtools.color).toBe('tertiary')
    expect(taskEntry(entries, 'search', v)?.devtools.color).toBe('secondary-dark')
    expect(property(taskEntry(entries, 'search', v), 'reason')).toBe('abort')
    expect(property(taskEntry(entries, 'search', v), 'cancelled by')).toBe(`#${ve}`)

    const [row, joiner] = ids.rows as [number, number]
    expect(taskEntry(entries, 'row', joiner)?.name).toBe(`row #${joiner} · deduped into #${row}`)
    expect(taskEntry(entries, 'row', joiner)?.devtools.color).toBe('secondary')
    expect(property(taskEntry(entries, 'row', joiner), 'reason')).toBe('dedupe')

    const [saved, dropped] = ids.saves as [number, number]
    expect(taskEntry(entries, 'save', saved)?.name).toBe(`save #${saved}`)
    expect(
      taskEntry(entries, 'save', dropped)?.name,
      entries.map((e) => `${e.api} ${e.name}`).join('\n'),
    ).toBe(`save #${dropped} · cancelled (exhaust-dropped)`)
    expect(taskEntry(entries, 'save', dropped)?.devtools.tooltipText).toMatch(
      /reason exhaust-dropped/,
    )
  })

  it('draws a retried task as its waits and attempts, in order, nested in the task entry', () => {
    const [load] = ids.load as [number]
    const task = taskEntry(entries, 'load', load)
    expect(task?.name).toBe(`load #${load} · 2 attempts`)
    expect(property(task, 'attempts')).toBe('2')
    const parts = partsOf(entries, 'load', load)
    expect(parts.map((entry) => entry.name.slice(`load #${load} · `.length))).toEqual([
      'queued',
      'attempt 1',
      'retry delay',
      'queued',
      'attempt 2',
    ])
    expect(parts[1]?.devtools.color).toBe('warning')
    expect(property(parts[1], 'error')).toBe('Error: 503 from the server')
    expect(property(parts[2], 'after')).toBe('Error: 503 from the server')
    expect(parts[4]?.devtools.color).toBe('tertiary')
    // The retry delay lasts at least its 15 ms.
    expect(parts[2]!.end - parts[2]!.start).toBeGreaterThanOrEqual(14_000)
  })

  it('nests every wait and attempt inside its task entry, each after the previous', () => {
    const all = [
      ...ids.search.map((id) => ['search', id] as const),
      ...ids.rows.map((id) => ['row', id] as const),
      ...ids.saves.map((id) => ['save', id] as const),
      ...ids.load.map((id) => ['load', id] as const),
    ]
    for (const [label, id] of all) {
      const task = taskEntry(entries, label, id)
      expect(task, `${label} #${id}`).toBeDefined()
      const parts = partsOf(entries, label, id)
      // A deduped or dropped call ends at its dispatch: it never waited nor ran.
      const decidedAtOnce = id === ids.rows[1] || id === ids.saves[1]
      expect(
        parts.some((part) => part.name.includes(' · attempt ')),
        `${label} #${id} ran`,
      ).toBe(!decidedAtOnce)
      let previousEnd = task!.start
      const seen = entries
        .filter((e) => e.name.startsWith(`${label} #${id}`))
        .map((e) => `${e.api} ${e.name} ${e.start}-${e.end}`)
        .join('\n')
      for (const part of parts) {
        expect(part.devtools.track).toBe(task!.devtools.track)
        expect(
          part.start,
          `${part.name} starts after what came before:\n${seen}`,
        ).toBeGreaterThanOrEqual(previousEnd)
        expect(part.end, `${part.name} ends inside ${task!.name}`).toBeLessThanOrEqual(task!.end)
        previousEnd = part.end
      }
    }
  })

  it('renders as lanes (the README’s picture)', async () => {
    await page.setContent(renderTrace(entries))
    const box = await page.locator('svg').first().boundingBox()
    await page.setViewportSize({ width: 1200, height: Math.ceil(box?.height ?? 600) })
    const lanes = await page.locator('[data-track]').count()
    expect(lanes).toBe(4)
    await saveScreenshot(page, 'performance-tracks')
  })
})

const PALETTE: { readonly [color: string]: string } = {
  primary: '#1a73e8',
  'primary-light': '#8ab4f8',
  'primary-dark': '#174ea6',
  secondary: '#9334e6',
  'secondary-light': '#c58af9',
  'secondary-dark': '#681da8',
  tertiary: '#188038',
  'tertiary-light': '#81c995',
  'tertiary-dark': '#0d652d',
  warning: '#f29900',
  error: '#d93025',
}

/**
 * The entries drawn as the Performance panel lays out a custom track group:
 * a row per track, a task's waits and attempts one level below it, and
 * overlapping tasks on levels of their own.
 */
function renderTrace(entries: readonly TrackEntry[]): string {
  const t0 = Math.min(...entries.map((entry) => entry.start))
  const t1 = Math.max(...entries.map((entry) => entry.end))
  const width = 1180
  const x = (ts: number) => 90 + ((ts - t0) / (t1 - t0)) * (width - 100)
  const escapeXml = (text: string) => text.replace(/[&<>"]/g, (c) => `&#${c.charCodeAt(0)};`)
  const tracks = [...new Set(entries.map((entry) => entry.devtools.track))]
  let y = 40
  const rows: string[] = []
  for (const track of tracks) {
    const inTrack = entries.filter((entry) => entry.devtools.track === track)
    const tasks = inTrack.filter(
      (entry) => !/ · (attempt \d+|queued|parked|retry delay|body exiting)/.test(entry.name),
    )
    const levels: number[] = []
    const bars: string[] = []
    const bar = (entry: TrackEntry, level: number) => {
      const left = x(entry.start)
      const w = Math.max(2, x(entry.end) - left)
      const top = y + level * 22
      const label = entry.name.replace(/^.*? · (?=attempt|queued|parked|retry|body)/, '')
      // A nested <svg> clips the label to its bar.
      bars.push(
        `<rect x="${left}" y="${top}" width="${w}" height="19" rx="2" fill="${PALETTE[entry.devtools.color]}"><title>${escapeXml(entry.devtools.tooltipText)}</title></rect>`,
        `<svg x="${left}" y="${top}" width="${w}" height="19"><text x="3" y="13" font-size="11" fill="#fff">${escapeXml(label)}</text></svg>`,
      )
    }
    for (const task of tasks) {
      let level = levels.findIndex((end) => end <= task.start)
      if (level === -1) level = levels.length
      levels[level] = task.end
      bar(task, level * 2)
      const id = task.name.split(' · ')[0]
      for (const part of inTrack) {
        if (
          part !== task &&
          part.name.startsWith(`${id} · `) &&
          / · (attempt|queued|parked|retry delay|body exiting)/.test(part.name)
        ) {
          bar(part, level * 2 + 1)
        }
      }
    }
    const height = Math.max(1, levels.length * 2) * 22 + 10
    rows.push(
      `<g data-track="${escapeXml(track)}"><line x1="0" x2="${width}" y1="${y - 6}" y2="${y - 6}" stroke="#ddd"/><text x="6" y="${y + 13}" font-size="12" font-weight="600">${escapeXml(track)}</text>${bars.join('')}</g>`,
    )
    y += height
  }
  return `<!doctype html><meta charset="utf-8"><body style="margin:0;font-family:system-ui,sans-serif;background:#fff">
<svg width="${width}" height="${y + 10}" xmlns="http://www.w3.org/2000/svg">
<text x="6" y="22" font-size="13" font-weight="700">▾ ${escapeXml(entries[0]?.devtools.trackGroup ?? '')} — ${((t1 - t0) / 1000).toFixed(0)} ms, from a Chromium trace</text>
${rows.join('\n')}
</svg></body>`
}
