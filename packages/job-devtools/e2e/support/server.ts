import { readFile } from 'node:fs/promises'
import { createServer, type Server } from 'node:http'
import type { AddressInfo } from 'node:net'
import { extname, join, normalize, resolve, sep } from 'node:path'
import { fileURLToPath } from 'node:url'

const PACKAGES = resolve(fileURLToPath(new URL('../../..', import.meta.url)))
const PAGES = resolve(fileURLToPath(new URL('../pages', import.meta.url)))
const TYPES: Readonly<Record<string, string>> = {
  '.html': 'text/html; charset=utf-8',
  '.js': 'text/javascript; charset=utf-8',
  '.map': 'application/json; charset=utf-8',
}

// The test pages import the built packages by name through an import map:
// the same files a user's bundler would pick, no bundler in between.
export const IMPORT_MAP = JSON.stringify({
  imports: {
    '@vega/job-core': '/pkg/job-core/dist/index.js',
    '@vega/job-coordination': '/pkg/job-coordination/dist/index.js',
    '@vega/job-devtools-protocol': '/pkg/job-devtools-protocol/dist/index.js',
    '@vega/job-devtools': '/pkg/job-devtools/dist/index.js',
    '@vega/job-devtools/production': '/pkg/job-devtools/dist/production.js',
  },
})

export interface TestServer {
  readonly url: string
  close(): Promise<void>
}

/** Serves `e2e/pages` at `/` and the packages' `dist` folders at `/pkg/<name>/dist/`, on loopback. */
export async function serveTestPages(): Promise<TestServer> {
  const server: Server = createServer((request, response) => {
    const pathname = decodeURIComponent(new URL(request.url ?? '/', 'http://127.0.0.1').pathname)
    const [, area, name, dist, ...rest] = pathname.split('/')
    const file =
      area === 'pkg' && dist === 'dist' && name !== undefined
        ? normalize(join(PACKAGES, name, 'dist', ...rest))
        : normalize(join(PAGES, pathname === '/' ? 'app.html' : pathname))
    const inside = file.startsWith(PACKAGES + sep) || file.startsWith(PAGES + sep)
    if (!inside) {
      response.writeHead(403).end()
      return
    }
    readFile(file).then(
      (body) => {
        const type = TYPES[extname(file)] ?? 'application/octet-stream'
        const text =
          extname(file) === '.html'
            ? body.toString().replace('{ "imports": {} }', IMPORT_MAP)
            : body
        response.writeHead(200, { 'content-type': type, 'cache-control': 'no-store' }).end(text)
      },
      () => response.writeHead(404, { 'content-type': 'text/plain' }).end('not found'),
    )
  })
  await new Promise<void>((ready, fail) => {
    server.once('error', fail)
    server.listen(0, '127.0.0.1', () => ready())
  })
  const { port } = server.address() as AddressInfo
  return {
    url: `http://127.0.0.1:${port}/`,
    close: () =>
      new Promise<void>((done, fail) => {
        server.closeAllConnections()
        server.close((error) => (error === undefined ? done() : fail(error)))
      }),
  }
}
