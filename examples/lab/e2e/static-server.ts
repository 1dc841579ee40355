import { readFile } from 'node:fs/promises'
import { createServer, type Server } from 'node:http'
import type { AddressInfo } from 'node:net'
import { extname, join, normalize, resolve, sep } from 'node:path'

const TYPES: Readonly<Record<string, string>> = {
  '.html': 'text/html; charset=utf-8',
  '.js': 'text/javascript; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
  '.map': 'application/json; charset=utf-8',
  '.svg': 'image/svg+xml',
  '.png': 'image/png',
}

export interface StaticServer {
  readonly url: string
  close(): Promise<void>
}

/** Serves `root` on 127.0.0.1 at a random port: enough for a built Vite page, nothing more. */
export async function serveStatic(root: string): Promise<StaticServer> {
  const base = resolve(root)
  const server: Server = createServer((request, response) => {
    const pathname = decodeURIComponent(new URL(request.url ?? '/', 'http://127.0.0.1').pathname)
    const file = normalize(join(base, pathname.endsWith('/') ? `${pathname}index.html` : pathname))
    // Never serve outside the root, whatever the URL says.
    if (file !== base && !file.startsWith(base + sep)) {
      response.writeHead(403).end()
      return
    }
    readFile(file).then(
      (body) => {
        response
          .writeHead(200, { 'content-type': TYPES[extname(file)] ?? 'application/octet-stream' })
          .end(body)
      },
      () => {
        response.writeHead(404, { 'content-type': 'text/plain' }).end('not found')
      },
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
