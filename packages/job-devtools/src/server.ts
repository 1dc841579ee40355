import { readFile } from 'node:fs/promises'
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http'
import { createRequire } from 'node:module'
import type { AddressInfo } from 'node:net'
import { dirname, extname, join, normalize, sep } from 'node:path'
import { fileURLToPath } from 'node:url'
import { type WebSocket, WebSocketServer } from 'ws'

/**
 * Options of {@link startDevtoolsServer}.
 *
 * @example
 * ```ts
 * const options: DevtoolsServerOptions = { port: 4318 }
 * ```
 */
export interface DevtoolsServerOptions {
  /** TCP port on 127.0.0.1; `0` (default) picks a free one. The bin uses 4318. */
  readonly port?: number | undefined
}

/**
 * A running standalone devtools server.
 *
 * @example
 * ```ts
 * const server: DevtoolsServer = await startDevtoolsServer({ port: 0 })
 * console.log(server.url, server.relayUrl)
 * await server.close()
 * ```
 */
export interface DevtoolsServer {
  /** The panel's page, `http://127.0.0.1:<port>/`. */
  readonly url: string
  /** Where producers connect: `ws://127.0.0.1:<port>/`. */
  readonly relayUrl: string
  /** Stops serving and closes every socket. */
  close(): Promise<void>
}

const TYPES: Readonly<Record<string, string>> = {
  '.js': 'text/javascript; charset=utf-8',
  '.map': 'application/json; charset=utf-8',
}

/**
 * Serves the devtools panel as a page on 127.0.0.1, with a WebSocket relay on
 * the same port: producers (`connectDevtools(runtime,
 * createWebSocketTransport(relayUrl))`) send batches, every open panel
 * receives them, and a panel's `request-snapshot` reaches every producer.
 * Each producer's session shows up in the panel's session picker. Nothing is
 * fetched from the network: the page's scripts are this package's and the
 * protocol package's own files. Browser pages of other origins cannot connect.
 *
 * @example
 * ```ts
 * import { startDevtoolsServer } from '@vega/job-devtools/server'
 * const server = await startDevtoolsServer({ port: 0 })
 * console.log(`open ${server.url}`)
 * await server.close()
 * ```
 */
export async function startDevtoolsServer(
  options: DevtoolsServerOptions = {},
): Promise<DevtoolsServer> {
  const port = options.port ?? 0
  if (!Number.isInteger(port) || port < 0 || port > 65_535) {
    throw new RangeError(
      `startDevtoolsServer(options): options.port must be an integer from 0 to 65535, got ${String(port)}.`,
    )
  }
  const panelDir = dirname(fileURLToPath(import.meta.url))
  const protocolDir = dirname(createRequire(import.meta.url).resolve('@vega/job-devtools-protocol'))
  let origin = ''
  const server = createServer((request, response) => {
    void serve(request, response, { panelDir, protocolDir, origin })
  })
  const relay = new WebSocketServer({
    server,
    // A page of another site must not read the app's events: only this
    // server's own page (or a client with no Origin, as Node's) may connect.
    verifyClient: ({ origin: from }: { origin?: string }) =>
      from === undefined || from === origin || from === origin.replace('127.0.0.1', 'localhost'),
  })
  const panels = new Set<WebSocket>()
  const producers = new Set<WebSocket>()
  relay.on('connection', (socket) => {
    socket.on('message', (data, isBinary) => {
      if (isBinary) return
      const text = data.toString()
      let message: unknown
      try {
        message = JSON.parse(text)
      } catch {
        return
      }
      if (Array.isArray(message)) {
        producers.add(socket)
        for (const panel of panels) panel.send(text)
        return
      }
      const type = (message as { type?: unknown } | null)?.type
      if (type === 'hello-panel') {
        producers.delete(socket)
        panels.add(socket)
        // A new panel starts from every producer's current tasks.
        for (const producer of producers)
          producer.send(JSON.stringify({ type: 'request-snapshot' }))
      } else if (type === 'request-snapshot' && panels.has(socket)) {
        for (const producer of producers) producer.send(text)
      }
    })
    socket.on('close', () => {
      panels.delete(socket)
      producers.delete(socket)
    })
    // Every socket is a producer until it says it is a panel: a panel's
    // request-snapshot must reach a producer that has not sent anything yet.
    producers.add(socket)
  })
  await new Promise<void>((ready, fail) => {
    server.once('error', fail)
    server.listen(port, '127.0.0.1', () => ready())
  })
  const { port: actual } = server.address() as AddressInfo
  origin = `http://127.0.0.1:${actual}`
  return {
    url: `${origin}/`,
    relayUrl: `ws://127.0.0.1:${actual}/`,
    close: () =>
      new Promise<void>((done, fail) => {
        for (const client of relay.clients) client.terminate()
        relay.close()
        server.closeAllConnections()
        server.close((error) => (error === undefined ? done() : fail(error)))
      }),
  }
}

interface ServeContext {
  readonly panelDir: string
  readonly protocolDir: string
  readonly origin: string
}

async function serve(
  request: IncomingMessage,
  response: ServerResponse,
  context: ServeContext,
): Promise<void> {
  const pathname = new URL(request.url ?? '/', 'http://127.0.0.1').pathname
  if (pathname === '/' || pathname === '/index.html') {
    response
      .writeHead(200, {
        'content-type': 'text/html; charset=utf-8',
        'cache-control': 'no-store',
      })
      .end(pageHtml(context.origin.replace(/^http/, 'ws')))
    return
  }
  const [, area, ...rest] = pathname.split('/')
  const base =
    area === 'panel' ? context.panelDir : area === 'protocol' ? context.protocolDir : undefined
  const file = base === undefined ? undefined : normalize(join(base, ...rest))
  const type = file === undefined ? undefined : TYPES[extname(file)]
  // Only scripts from the two dist folders, never a path outside them.
  if (
    base === undefined ||
    file === undefined ||
    type === undefined ||
    !file.startsWith(base + sep)
  ) {
    response.writeHead(404, { 'content-type': 'text/plain' }).end('not found')
    return
  }
  try {
    const body = await readFile(file)
    response.writeHead(200, { 'content-type': type }).end(body)
  } catch {
    response.writeHead(404, { 'content-type': 'text/plain' }).end('not found')
  }
}

function pageHtml(relayUrl: string): string {
  return `<!doctype html>
<html lang="en">
  <head>
    <meta charset="utf-8" />
    <title>@vega/job devtools</title>
    <link rel="icon" href="data:," />
    <script type="importmap">{ "imports": { "@vega/job-devtools-protocol": "/protocol/index.js" } }</script>
    <style>html, body { margin: 0; height: 100%; background: #16181d; } #app { position: relative; height: 100%; }</style>
  </head>
  <body>
    <div id="app"></div>
    <script type="module">
      import { mountDevtools } from '/panel/index.js'
      window.devtools = mountDevtools({
        source: { url: ${JSON.stringify(`${relayUrl}/`)} },
        container: document.getElementById('app'),
        position: 'fill',
        open: true,
        hotkey: false,
      })
    </script>
  </body>
</html>
`
}
