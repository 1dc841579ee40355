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
