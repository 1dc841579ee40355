// Needs Debian's Chromium (the root `pnpm test:e2e` runs it after installing it).
import assert from 'node:assert/strict'
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { test } from 'node:test'
import { keepOffline, launchChromium, serveStatic } from './index.mjs'

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
