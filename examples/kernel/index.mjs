// A tour of the kernel on a real runtime with real timers: concurrency and
// priority, cancellation with an honest slot, retry with a timeout, and a
// drained shutdown. Every line printed comes from the event bus or a promise.
import {
  createRuntime,
  inspect,
  isCancelledError,
  run,
  settle,
  shutdown,
  subscribe,
} from '@vega/job-core'

const runtime = createRuntime({ name: 'tour', concurrency: 2 })
const started = Date.now()
const t = () => `${String(Date.now() - started).padStart(4)}ms`

subscribe(runtime, (event) => {
  if (event.type === 'task:transition') {
    const why = event.reason ? ` (${event.reason})` : ''
    console.log(`${t()}  #${event.taskId} ${event.from} → ${event.to}${why}`)
  } else if (event.type === 'task:retry') {
    console.log(
      `${t()}  #${event.taskId} attempt ${event.attempt} failed, retrying in ${event.delay} ms`,
    )
  } else if (event.type === 'task:exited') {
    console.log(`${t()}  #${event.taskId} body exited after its task or attempt had already ended`)
  }
})

console.log('── two slots, four tasks; the urgent one jumps the queue')
const work = (name, ms) => async (ctx) => {
  await ctx.sleep(ms)
  return name
}
const tasks = [
  run(runtime, work('a', 40), { label: 'a' }),
  run(runtime, work('b', 40), { label: 'b' }),
  run(runtime, work('c', 10), { label: 'c' }),
  run(runtime, work('urgent', 10), { label: 'urgent', priority: 10 }),
]
console.log('results:', await Promise.all(tasks))

console.log('── cancel a running task: its promise rejects at once')
const slow = run(runtime, work('slow', 1_000), { label: 'slow' })
setTimeout(() => slow.cancel(), 20)
try {
  await slow
} catch (error) {
  console.log(`cancelled: ${isCancelledError(error)}, reason: ${error.reason}`)
}

console.log('── a flaky call: 3 attempts, each limited to 50 ms')
let calls = 0
const flaky = run(
  runtime,
  async (ctx) => {
    calls++
    if (ctx.attempt < 3) await ctx.sleep(200) // times out
    return `ok on attempt ${ctx.attempt}`
  },
  { label: 'flaky', retry: { attempts: 3, delay: 10 }, timeout: { attempt: 50 } },
)
console.log(await settle(flaky), `(${calls} calls)`)

console.log('── shutdown: drain what is queued, refuse what comes after')
const last = run(runtime, work('last', 20), { label: 'last' })
const report = shutdown(runtime, { mode: 'drain', deadline: 1_000 })
const refused = run(runtime, work('too late', 1))
console.log(`after shutdown(): refused task is ${refused.state} (${refused.cancelReason})`)
console.log('report:', await report, 'last:', await last)
console.log('live tasks left:', inspect(runtime).sizes.liveTasks)
