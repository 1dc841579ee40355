// `pnpm lab:redis -- --devtools <relay>` as a user runs it: the standalone
// devtools server (the `vega-job-devtools` bin that `pnpm devtools` runs) open
// in Debian's headless Chromium, then the lab with its own redis-server and two processes, each
// sending its runtime's events to the relay. The panel must show them as two
// sessions, each with its own process's calls. Nothing is fetched from the
// network.
import assert from 'node:assert/strict'
import { execFile, spawn } from 'node:child_process'
import { mkdirSync } from 'node:fs'
import { after, before, test } from 'node:test'
import { fileURLToPath } from 'node:url'
import { promisify } from 'node:util'
import { keepOffline, launchChromium } from '@vega/browser'

const cli = fileURLToPath(new URL('./cli.mjs', import.meta.url))
const DOCS = fileURLToPath(new URL('../../docs/', import.meta.url))
const BIN = fileURLToPath(new URL('./node_modules/.bin/vega-job-devtools', import.meta.url))

/** Starts the bin on a free port; resolves with its page and relay URLs once it serves. */
function startDevtoolsBin() {
  const child = spawn(BIN, ['--port', '0'], { stdio: ['ignore', 'pipe', 'inherit'] })
  const exited = new Promise((resolve) => child.once('exit', (code) => resolve(code)))
  let output = ''
  return new Promise((resolve, reject) => {
    child.stdout.on('data', (chunk) => {
      output += chunk
      const [, url] = output.match(/open (http:\/\/127\.0\.0\.1:\d+\/)/) ?? []
      if (url === undefined) return
      resolve({
        url,
        relayUrl: url.replace(/^http/, 'ws'),
        close: () => {
          child.kill('SIGTERM')
          return exited
        },
      })
    })
    child.once('exit', (code) =>
      reject(new Error(`vega-job-devtools exited with ${code} before serving:\n${output}`)),
    )
  })
}

let server
let browser
let page
const pageErrors = []
let offline = []

before(async () => {
  server = await startDevtoolsBin()
  browser = await launchChromium()
  page = await browser.newPage({ viewport: { width: 1280, height: 720 } })
  page.on('pageerror', (error) => pageErrors.push(String(error)))
  offline = await keepOffline(page)
})

after(async () => {
  await browser?.close()
  // The bin stops cleanly on SIGTERM, as it does on Ctrl+C.
  if (server !== undefined) assert.equal(await server.close(), 0)
})

/** Polls `read` until `accept` holds (or fails with the last value read). */
async function until(read, accept, what, timeoutMs = 30_000) {
  const deadline = Date.now() + timeoutMs
  let last
  for (;;) {
    last = await read()
    if (accept(last)) return last
    if (Date.now() > deadline) {
      assert.fail(`${what}: still ${JSON.stringify(last)} after ${timeoutMs} ms`)
    }
    await new Promise((resolve) => setTimeout(resolve, 100))
  }
}

test('with --devtools, the two processes show as two sessions in the standalone panel', async () => {
  await page.goto(server.url)
  const panel = page.locator('vega-job-devtools')
  await until(
    () => panel.locator('[data-connection]').getAttribute('data-connection'),
    (state) => state === 'connected',
    'the panel connects to its relay',
  )

  const { stdout } = await promisify(execFile)(
    'node',
    [cli, '--strategy', 'serialize', '--duration', '50', '--devtools', server.relayUrl],
    { timeout: 60_000 },
  )
  // The lab's own output is unchanged: every call ran and resolved.
  assert.match(stdout, /bodies run: 4 {2}\(#1 #2 #3 #4\)/)

  const options = panel.locator('select[data-session] option')
  const names = await until(
    () => options.allTextContents(),
    (texts) => texts.length === 3,
    'two sessions in the picker, and both side by side',
  )
  assert.deepEqual(
    names
      .slice(0, 2)
      .map((name) => name.split(' · ')[0])
      .sort(),
    ['redis-lab A', 'redis-lab B'],
  )
  assert.equal(names[2], 'all 2 sessions, side by side')

  // #1 and #3 ran in A, #2 and #4 in B: each session holds its own two calls.
  for (const [runtime, calls] of [
    ['redis-lab A', [1, 3]],
    ['redis-lab B', [2, 4]],
  ]) {
    const value = await options.filter({ hasText: runtime }).first().getAttribute('value')
    await panel.locator('select[data-session]').selectOption(value ?? '')
    const rows = await until(
      () => panel.locator('[data-task-id]').allTextContents(),
      // The session's own calls, not the rows of the one shown before the pick.
      (texts) =>
        texts.length === calls.length &&
        texts.every((text) => text.includes('success')) &&
        calls.every((call) => texts.some((text) => text.includes(`call #${call} serialize`))),
      `${runtime}: its calls settled as rows`,
    )
    for (const call of calls) {
      assert.ok(
        rows.some((text) => text.includes(`call #${call} serialize`)),
        `${runtime} shows call #${call}: ${JSON.stringify(rows)}`,
      )
    }
    assert.equal(await panel.locator('[data-count="success"]').textContent(), String(calls.length))
    // Nothing was lost between the processes and the panel.
    assert.equal(await panel.locator('[data-gap]').getAttribute('data-gap'), '0')
  }
  // Side by side: the four calls in one lane list, in the order they started,
  // each with the process that ran it.
  await panel.locator('select[data-session]').selectOption({ label: names[2] })
  const together = await until(
    () =>
      panel.locator('.row[data-task-id]').evaluateAll((rows) =>
        rows.map((row) => ({
          process: row.querySelector('.process')?.textContent,
          label: row.querySelector('.label')?.textContent,
        })),
      ),
    (rows) => rows.length === 4,
    'the four calls side by side',
  )
  for (const [index, row] of together.entries()) {
    const call = index + 1
    assert.match(row.label ?? '', new RegExp(`call #${call} serialize`))
    assert.equal(row.process, call % 2 === 1 ? 'redis-lab A' : 'redis-lab B')
  }
  assert.equal(await panel.locator('[data-count="success"]').textContent(), '4')
  if (process.env.SCREENSHOTS === '1') {
    mkdirSync(DOCS, { recursive: true })
    await page.screenshot({ path: `${DOCS}redis-lab-devtools.png` })
  }
  assert.deepEqual(pageErrors, [])
  assert.deepEqual(offline, [])
})

test('--devtools with nothing listening fails early, saying what to start', async () => {
  const closed = new URL(server.relayUrl)
  closed.port = '1'
  await assert.rejects(
    promisify(execFile)('node', [cli, '--devtools', closed.href], { timeout: 30_000 }),
    (error) => {
      assert.equal(error.code, 2)
      assert.match(
        error.stderr,
        /--devtools: cannot connect to ws:\/\/127\.0\.0\.1:1\/.*pnpm devtools/,
      )
      return true
    },
  )
})
