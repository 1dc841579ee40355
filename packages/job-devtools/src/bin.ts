import { startDevtoolsServer } from './server.js'

// `vega-job-devtools [--port 4318]`: the panel as a page on 127.0.0.1, with
// the relay Node processes connect to.
const args = process.argv.slice(2)
const portFlag = args.indexOf('--port')
const portText = portFlag >= 0 ? args[portFlag + 1] : process.env.VEGA_DEVTOOLS_PORT
const port = portText === undefined ? 4318 : Number(portText)
if (args.includes('--help')) {
  console.log('usage: vega-job-devtools [--port 4318]')
  process.exit(0)
}
if (!Number.isInteger(port) || port < 0 || port > 65_535) {
  console.error(
    `vega-job-devtools: --port must be an integer from 0 to 65535, got ${String(portText)}`,
  )
  process.exit(2)
}
const server = await startDevtoolsServer({ port })
console.log(`@vega/job devtools: open ${server.url}`)
console.log(
  `connect a process: connectDevtools(runtime, createWebSocketTransport('${server.relayUrl}'))  (Node 20: pass { WebSocket } from 'ws' as its options)`,
)
// A stop the user asked for (Ctrl-C, or SIGTERM from a process manager) is
// no failure: close the relay and the page, exit 0, so pnpm prints no error.
// A second signal while closing changes nothing.
let stopping = false
const stop = (): void => {
  process.exitCode = 0
  if (stopping) return
  stopping = true
  void server.close().finally(() => process.exit(0))
}
process.on('SIGINT', stop)
process.on('SIGTERM', stop)
