// Needs Debian's Chromium (the root `pnpm test:e2e` runs it after installing it).
import assert from 'node:assert/strict'
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { test } from 'node:test'
import { keepOffline, launchChromium, recordTrackEntries, serveStatic } from './index.mjs'

test('a page served on loopback loads; keepOffline refuses and lists every request elsewhere', async () => {
  const root = mkdtempSync(join(tmpdir(), 'vega-browser-e2e-'))
  writeFileSync(join(root, 'index.html'), '<title>served</title><p id="text">on loopback</p>')
  const server = await serveStatic(root)
  const browser = await launchChromium()
  try {
    const page = await browser.newPage()
    const refused = await keepOffline(page)
    await page.goto(server.url)
    assert.equal(await page.textContent('#text'), 'on loopback')
    const outcome = await page.evaluate(() =>
      fetch('http://example.invalid/data.json').then(
        () => 'fetched',
        (error) => error.name,
      ),
    )
    assert.equal(outcome, 'TypeError')
    assert.deepEqual(refused, ['http://example.invalid/data.json'])
  } finally {
    await browser.close()
    await server.close()
    rmSync(root, { recursive: true })
  }
})

test('recordTrackEntries reads back the custom track entries a page wrote while it traced', async () => {
  const browser = await launchChromium()
  try {
    const page = await browser.newPage()
    await page.setContent('<title>tracks</title>')
    const entries = await recordTrackEntries(page, () =>
      page.evaluate(() => {
        const t0 = performance.now()
        console.timeStamp('plain', t0, t0 + 5, 'track a', 'group', 'primary')
        performance.measure('with details', {
          start: t0 + 1,
          end: t0 + 3,
          detail: {
            devtools: {
              dataType: 'track-entry',
              track: 'track b',
              trackGroup: 'group',
              color: 'error',
            },
          },
        })
        performance.measure('not a track entry', { start: t0, end: t0 + 2 })
      }),
    )
    assert.deepEqual(
      entries.map((entry) => [
        entry.api,
        entry.name,
        entry.devtools.track,
        entry.devtools.trackGroup,
      ]),
      [
        ['timeStamp', 'plain', 'track a', 'group'],
        ['measure', 'with details', 'track b', 'group'],
      ],
    )
    assert.ok(entries[0].start <= entries[1].start && entries[1].end <= entries[0].end)
  } finally {
    await browser.close()
  }
})
