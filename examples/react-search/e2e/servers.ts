// The example served for the e2e tests: Vite's dev server (React's
// development build, the devtools and the performance tracks installed) and
// the production build served by `vite preview` (their no-op entry).
import { existsSync } from 'node:fs'
import type { AddressInfo } from 'node:net'
import { fileURLToPath } from 'node:url'
import { createServer, preview } from 'vite'

const ROOT = fileURLToPath(new URL('../', import.meta.url))
const CONFIG = fileURLToPath(new URL('../vite.config.ts', import.meta.url))

export interface Served {
  readonly url: string
  close(): Promise<void>
}

function urlOf(server: { address(): AddressInfo | string | null } | null | undefined): string {
  const address = server?.address()
  if (address === null || address === undefined || typeof address === 'string') {
    throw new Error('the server has no TCP address')
  }
  return `http://127.0.0.1:${address.port}/`
}

export async function devServer(): Promise<Served> {
  const server = await createServer({
    configFile: CONFIG,
    root: `${ROOT}web`,
    logLevel: 'error',
    server: { port: 0, strictPort: false },
  })
  await server.listen()
  return { url: urlOf(server.httpServer), close: () => server.close() }
}

export async function productionBuild(): Promise<Served> {
  if (!existsSync(`${ROOT}dist/index.html`)) {
    throw new Error(
      'dist/index.html is missing: run `pnpm test:e2e` from the root, which builds first.',
    )
  }
  const server = await preview({
    configFile: CONFIG,
    root: `${ROOT}web`,
    logLevel: 'error',
    preview: { port: 0, strictPort: false },
  })
  return {
    url: urlOf(server.httpServer),
    close: () => new Promise<void>((resolve) => server.httpServer.close(() => resolve())),
  }
}
