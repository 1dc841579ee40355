// `pnpm lab:web`: vite's dev server for web/ (vite.config.ts), stopped
// cleanly. SIGTERM from a process manager, or SIGINT from Ctrl-C, closes the
// server and exits 0: a stop the user asked for is not a failure, so pnpm
// prints no error for it. (Vite's own SIGTERM handler exits with 128 + 15 =
// 143 unless an exit code is already set, which pnpm reports as a failed
// command; this handler is registered first and sets 0.)
import { createServer } from 'vite'

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

server = await createServer()
await server.listen()
server.printUrls()
