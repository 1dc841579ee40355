import assert from 'node:assert/strict'
import { spawnSync } from 'node:child_process'
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { test } from 'node:test'
import { insideRoot, serveFiles, serveStatic, trackEntriesOf } from './index.mjs'

function scratchRoot() {
  const root = mkdtempSync(join(tmpdir(), 'vega-browser-test-'))
  mkdirSync(join(root, 'app'))
  writeFileSync(join(root, 'index.html'), '<p>home</p>')
  writeFileSync(join(root, 'app', 'index.html'), '<p>app</p>')
  writeFileSync(join(root, 'app', 'main.js'), 'export {}')
  return root
}

test('serveStatic serves the root, a folder as its index.html, with content types, and refuses the way out', async () => {
  const root = scratchRoot()
  const server = await serveStatic(join(root, 'app'))
  try {
    assert.match(server.url, /^http:\/\/127\.0\.0\.1:\d+\/$/)
    const home = await fetch(server.url)
    assert.equal(home.status, 200)
    assert.equal(await home.text(), '<p>app</p>')
    const script = await fetch(`${server.url}main.js`)
    assert.equal(script.headers.get('content-type'), 'text/javascript; charset=utf-8')
    assert.equal((await fetch(`${server.url}missing.js`)).status, 404)
    // URLs normalise a `..` segment away; an encoded slash survives that and
    // decodes to `../index.html`, the way out a hostile client would try.
    assert.equal((await fetch(`${server.url}%2e%2e%2findex.html`)).status, 403)
  } finally {
    await server.close()
    rmSync(root, { recursive: true })
  }
})

test('insideRoot maps inside paths and refuses outside ones', () => {
  const locate = insideRoot('/srv/site')
  assert.equal(locate('/'), '/srv/site/index.html')
  assert.equal(locate('/a/b.js'), '/srv/site/a/b.js')
  assert.equal(locate('/../etc/passwd'), undefined)
  assert.equal(locate('/../site-other/x'), undefined)
})

test('serveFiles transforms bodies and answers 403 where locate refuses', async () => {
  const root = scratchRoot()
  const server = await serveFiles(
    (pathname) => (pathname === '/secret' ? undefined : insideRoot(root)(pathname)),
    { transform: (file, body) => (file.endsWith('.html') ? `${body}<!-- served -->` : body) },
  )
  try {
    assert.equal(await (await fetch(server.url)).text(), '<p>home</p><!-- served -->')
    assert.equal(await (await fetch(`${server.url}app/main.js`)).text(), 'export {}')
    assert.equal((await fetch(`${server.url}secret`)).status, 403)
  } finally {
    await server.close()
    rmSync(root, { recursive: true })
  }
})

test('launchChromium names the install command when the browser is missing', () => {
  // A child process, so CHROMIUM_PATH is read fresh and no real browser starts.
  const child = spawnSync(
    process.execPath,
    ['--input-type=module', '-e', "await (await import('./index.mjs')).launchChromium()"],
    {
      cwd: import.meta.dirname,
      env: { ...process.env, CHROMIUM_PATH: '/nowhere/chromium' },
      encoding: 'utf8',
    },
  )
  assert.notEqual(child.status, 0)
  assert.match(
    child.stderr,
    /\/nowhere\/chromium is missing: apt-get install -y chromium \(or set CHROMIUM_PATH\)\./,
  )
})

test('trackEntriesOf reads time stamps with a track and measures with detail.devtools, and nothing else', () => {
  const devtools = { dataType: 'track-entry', track: 't', trackGroup: 'g', color: 'error' }
  const detail = JSON.stringify({ devtools })
  const trace = {
    traceEvents: [
      {
        name: 'TimeStamp',
        cat: 'devtools.timeline',
        ph: 'I',
        ts: 1,
        args: {
          data: {
            message: 'plain',
            start: 10,
            end: 30,
            track: 't',
            trackGroup: 'g',
            color: 'primary',
          },
        },
      },
      {
        name: 'TimeStamp',
        cat: 'devtools.timeline',
        ph: 'I',
        ts: 2,
        args: { data: { message: 'no track', start: 5, end: 6 } },
      },
      // The 'e' listed before its 'b'.
      {
        name: 'failed',
        cat: 'blink.user_timing',
        ph: 'e',
        ts: 40,
        id2: { local: '0x1' },
        args: {},
      },
      {
        name: 'failed',
        cat: 'blink.user_timing',
        ph: 'b',
        ts: 20,
        id2: { local: '0x1' },
        args: { detail },
      },
      {
        name: 'instant',
        cat: 'blink.user_timing',
        ph: 'n',
        ts: 10,
        id2: { local: '0x2' },
        args: { detail },
      },
      {
        name: 'mark only',
        cat: 'blink.user_timing',
        ph: 'b',
        ts: 1,
        id2: { local: '0x3' },
        args: { detail: '{"other":1}' },
      },
      {
        name: 'mark only',
        cat: 'blink.user_timing',
        ph: 'e',
        ts: 2,
        id2: { local: '0x3' },
        args: {},
      },
      {
        name: 'no end',
        cat: 'blink.user_timing',
        ph: 'b',
        ts: 3,
        id2: { local: '0x4' },
        args: { detail },
      },
    ],
  }
  assert.deepEqual(
    trackEntriesOf(trace).map(({ api, name, start, end }) => [api, name, start, end]),
    [
      ['timeStamp', 'plain', 10, 30],
      ['measure', 'instant', 10, 10],
      ['measure', 'failed', 20, 40],
    ],
  )
  assert.deepEqual(trackEntriesOf(trace)[2].devtools, devtools)
  assert.deepEqual(trackEntriesOf(trace.traceEvents), trackEntriesOf(trace))
})
