// A Node process with its own runtime, connected to the devtools relay over a
// WebSocket: what a user's service does. Runs `calls` tasks, prints "ran",
// then waits for "exit" on stdin.
import { createRuntime, run } from '@vega/job-core'
import { connectDevtools, createWebSocketTransport } from '@vega/job-devtools-protocol'
import { WebSocket } from 'ws'

const [url, name, callsText] = process.argv.slice(2)
const runtime = createRuntime({ name })
const transport = createWebSocketTransport(url, { WebSocket })
const disconnect = connectDevtools(runtime, transport, { flushMs: 5 })
const calls = Number(callsText)
const tasks = []
for (let call = 1; call <= calls; call++) {
  tasks.push(run(runtime, async () => call, { label: `${name} job ${call}` }))
}
await Promise.all(tasks.map((task) => task.promise))
process.stdout.write('ran\n')
process.stdin.on('data', (chunk) => {
  if (String(chunk).includes('exit')) {
    disconnect()
    transport.close()
    process.stdin.destroy()
  }
})
