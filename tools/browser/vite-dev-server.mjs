#!/usr/bin/env node
// `vega-vite-dev`: Vite's dev server for the package in the current
// directory (its vite.config.ts), stopped cleanly. It is what `pnpm lab:web`
// and `pnpm example:react` run. SIGTERM from a process manager, or SIGINT
// from Ctrl-C, closes the server and exits 0: a stop the user asked for is
// not a failure, so pnpm prints no error for it. (Vite's own SIGTERM handler
// exits with 128 + 15 = 143 unless an exit code is already set, which pnpm
// reports as a failed command; these handlers are registered first and set 0.)
//
// Vite is the one the package itself depends on, resolved from the current
// directory: this tool carries no Vite of its own.
import { createRequire } from 'node:module'
import { join } from 'node:path'
import { pathToFileURL } from 'node:url'

let server
let stopping = false
function stop() {
  process.exitCode = 0
  if (stopping) return
  stopping = true
  Promise.resolve(server?.close()).finally(() => process.exit(0))
}
process.on('SIGTERM', stop)
process.on('SIGINT', stop)

const vitePath = createRequire(join(process.cwd(), 'package.json')).resolve('vite')
const { createServer } = await import(pathToFileURL(vitePath).href)
server = await createServer()
if (stopping) {
  await server.close()
} else {
  await server.listen()
  server.printUrls()
}
