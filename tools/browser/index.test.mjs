import assert from 'node:assert/strict'
import { spawnSync } from 'node:child_process'
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { test } from 'node:test'
import { insideRoot, serveFiles, serveStatic } from './index.mjs'

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
