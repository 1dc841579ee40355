// The repository's browser tests and benches all run Debian's Chromium
// (never a browser build playwright would download) and must work offline:
// one place says how to start it, how to keep a page off the network, and
// how to serve built files on loopback.
import { existsSync } from 'node:fs'
import { readFile } from 'node:fs/promises'
import { createServer } from 'node:http'
import { extname, join, normalize, resolve, sep } from 'node:path'
import { chromium } from 'playwright-core'

const ARGS = [
  '--headless',
  '--no-sandbox',
  '--disable-gpu',
  // Chromium's own traffic (updates, sync, field trials) would be refused by
  // keepOffline and reported as the page's.
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
  '--no-first-run',
  '--disable-quic',
]

const TYPES = {
  '.html': 'text/html; charset=utf-8',
  '.js': 'text/javascript; charset=utf-8',
  '.mjs': 'text/javascript; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
  '.json': 'application/json; charset=utf-8',
  '.map': 'application/json; charset=utf-8',
  '.svg': 'image/svg+xml',
  '.png': 'image/png',
}

export function chromiumPath() {
  return process.env.CHROMIUM_PATH ?? '/usr/bin/chromium'
}

export async function launchChromium(extraArgs = []) {
  const executablePath = chromiumPath()
  if (!existsSync(executablePath)) {
    throw new Error(
      `${executablePath} is missing: apt-get install -y chromium (or set CHROMIUM_PATH).`,
    )
  }
  return chromium.launch({ executablePath, args: [...ARGS, ...extraArgs] })
}

export async function keepOffline(target) {
  const refused = []
  await target.route('**/*', (route) => {
    const url = route.request().url()
    if (new URL(url).hostname === '127.0.0.1') return route.continue()
    refused.push(url)
    return route.abort()
  })
  return refused
}

export function insideRoot(root) {
  const base = resolve(root)
  return (pathname) => {
    const file = normalize(join(base, pathname.endsWith('/') ? `${pathname}index.html` : pathname))
    // Never outside the root, whatever the URL says.
    return file === base || file.startsWith(base + sep) ? file : undefined
  }
}

export async function serveFiles(locate, options = {}) {
  const transform = options.transform ?? ((_file, body) => body)
  const server = createServer((request, response) => {
    const pathname = decodeURIComponent(new URL(request.url ?? '/', 'http://127.0.0.1').pathname)
    const file = locate(pathname)
    if (file === undefined) {
      response.writeHead(403).end()
      return
    }
    readFile(file).then(
      (body) => {
        const type = TYPES[extname(file)] ?? 'application/octet-stream'
        response
          .writeHead(200, { 'content-type': type, 'cache-control': 'no-store' })
          .end(transform(file, body))
      },
      () => response.writeHead(404, { 'content-type': 'text/plain' }).end('not found'),
    )
  })
  await new Promise((ready, fail) => {
    server.once('error', fail)
    server.listen(0, '127.0.0.1', () => ready())
  })
  return {
    url: `http://127.0.0.1:${server.address().port}/`,
    close: () =>
      new Promise((done, fail) => {
        server.closeAllConnections()
        server.close((error) => (error === undefined ? done() : fail(error)))
      }),
  }
}

export function serveStatic(root) {
  return serveFiles(insideRoot(root))
}

// Custom track entries (the DevTools extensibility API) as a Chromium trace
// holds them: a `console.timeStamp` with a track is one `TimeStamp` event;
// a `performance.measure` with `detail.devtools` is a 'b' and an 'e' event
// of one id in `blink.user_timing` (the trace may list the 'e' first), or a
// single 'n' event when it lasted 0 ms (the page's clock is coarse).
export function trackEntriesOf(trace) {
  const events = Array.isArray(trace) ? trace : trace.traceEvents
  const begins = new Map()
  const ends = new Map()
  const entries = []
  for (const event of events) {
    const data = event.args?.data
    const id = `${event.id2?.local}:${event.name}`
    if (event.name === 'TimeStamp' && data?.track !== undefined) {
      entries.push({
        api: 'timeStamp',
        name: data.message,
        start: data.start,
        end: data.end,
        devtools: {
          dataType: 'track-entry',
          track: data.track,
          trackGroup: data.trackGroup ?? '',
          color: data.color ?? '',
          tooltipText: '',
          properties: [],
        },
      })
    } else if (event.cat === 'blink.user_timing' && (event.ph === 'b' || event.ph === 'n')) {
      begins.set(id, event)
      if (event.ph === 'n') ends.set(id, event)
    } else if (event.cat === 'blink.user_timing' && event.ph === 'e') {
      ends.set(id, event)
    }
  }
  for (const [id, begin] of begins) {
    const end = ends.get(id)
    const detail = begin.args?.detail
    if (end === undefined || detail === undefined) continue
    const devtools = JSON.parse(detail).devtools
    if (devtools === undefined) continue
    entries.push({ api: 'measure', name: begin.name, start: begin.ts, end: end.ts, devtools })
  }
  return entries.sort((a, b) => a.start - b.start || b.end - a.end)
}

export async function recordTrackEntries(page, action) {
  const cdp = await page.context().newCDPSession(page)
  try {
    const complete = new Promise((resolve) =>
      cdp.once('Tracing.tracingComplete', ({ stream }) => resolve(stream)),
    )
    await cdp.send('Tracing.start', {
      transferMode: 'ReturnAsStream',
      traceConfig: { includedCategories: ['blink.user_timing', 'devtools.timeline'] },
    })
    await action()
    await cdp.send('Tracing.end')
    const stream = await complete
    let text = ''
    for (;;) {
      const chunk = await cdp.send('IO.read', { handle: stream })
      text += chunk.base64Encoded ? Buffer.from(chunk.data, 'base64').toString() : chunk.data
      if (chunk.eof) break
    }
    await cdp.send('IO.close', { handle: stream })
    return trackEntriesOf(JSON.parse(text))
  } finally {
    await cdp.detach()
  }
}
