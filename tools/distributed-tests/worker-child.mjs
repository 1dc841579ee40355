// The child side of the multi-process tests, for every engine: one runtime
// per process, driven by the parent over IPC (see processes.mjs). Bodies
// report when they enter and leave, with a clock every process shares. An
// engine's child script only says how to connect:
//
//   serveWorker({ async connect(init) { … return { coordination, fencingToken, assertLease, ping, close } } })

import { installCoordination, withCoordinator } from '@vega/job-coordination'
import { createRuntime, isCancelledError, run, settle, shutdown, subscribe } from '@vega/job-core'

// The system-wide monotonic clock: every process on the machine reads the same one.
const now = () => Number(process.hrtime.bigint()) / 1e6
const send = (message) => process.send?.(message)

function describe(error) {
  if (isCancelledError(error)) return { name: 'CancelledError', reason: error.reason }
  if (error instanceof Error) return { name: error.name, message: error.message }
  return { name: typeof error, message: String(error) }
}

/**
 * Serves the parent's commands: init (connect, make the runtime, issue the
 * boot calls), call, open (a gated body), inspect, counters, shutdown.
 * `connect(init)` resolves with `{ coordination, fencingToken, assertLease,
 * ping(), close(), started?(runtime) }`.
 */
export function serveWorker({ connect }) {
  let engine
  let runtime
  const coordinators = new Map()
  /** Bodies that hold until the parent opens them ({ cmd: 'open', n }). */
  const gates = new Map()

  const coordinatorOf = (strategy) => {
    let coordinator = coordinators.get(strategy)
    if (coordinator === undefined) {
      coordinator =
        strategy === 'serialize2'
          ? engine.coordination.createSerialize({ concurrency: 2 })
          : engine.coordination[strategy]
      coordinators.set(strategy, coordinator)
    }
    return coordinator
  }

  async function call({
    n,
    strategy,
    key,
    bodyMs,
    value,
    fence,
    ignoreSignal,
    assertAtEnd,
    gated,
  }) {
    const body = async (ctx) => {
      send({ t: 'enter', n, at: now(), pid: process.pid })
      ctx.signal.addEventListener('abort', () =>
        send({ t: 'aborted', n, at: now(), reason: describe(ctx.signal.reason) }),
      )
      try {
        if (fence) {
          const token = await engine.fencingToken(ctx)
          send({ t: 'token', n, fence: token.fence, runId: token.runId })
        }
        if (gated) await new Promise((resolve) => gates.set(n, resolve))
        else if (ignoreSignal) await new Promise((resolve) => setTimeout(resolve, bodyMs))
        else await ctx.sleep(bodyMs)
        if (assertAtEnd) {
          const token = await engine.assertLease(ctx)
          send({ t: 'asserted', n, fence: token.fence })
        }
        return value
      } finally {
        send({ t: 'exit', n, at: now() })
      }
    }
    const task = run(runtime, withCoordinator(body, coordinatorOf(strategy), { key }))
    send({ t: 'called', n, id: task.id, at: now() })
    const outcome = await settle(task)
    const promise = await task.promise.then(
      (v) => ({ status: 'resolved', value: v }),
      (error) => ({ status: 'rejected', error: describe(error) }),
    )
    send({
      t: 'settled',
      n,
      at: now(),
      state: task.state,
      reason: task.cancelReason,
      outcome:
        outcome.status === 'error'
          ? { status: 'error', error: describe(outcome.error) }
          : { status: outcome.status },
      promise,
    })
  }

  const issue = (message) =>
    call(message).catch((error) => send({ t: 'crash', n: message.n, error: describe(error) }))

  process.on('message', async (message) => {
    if (message.cmd === 'init') {
      engine = await connect(message)
      runtime = createRuntime({ plugins: [installCoordination, engine.coordination.plugin] })
      subscribe(runtime, (event) => {
        if (event.type.startsWith('coordination:')) send({ t: 'event', event })
      })
      // A service at boot: it makes its engine and issues its calls in one tick.
      for (const n of message.boot?.ns ?? []) issue({ ...message.boot.spec, n })
      engine.started?.(runtime)
      await engine.ping()
      send({ t: 'ready', pid: process.pid })
    } else if (message.cmd === 'call') {
      issue(message)
    } else if (message.cmd === 'open') {
      gates.get(message.n)?.()
    } else if (message.cmd === 'inspect') {
      send({
        t: 'inspect',
        state: engine.coordination.inspect(),
        counters: engine.coordination.counters(),
      })
    } else if (message.cmd === 'counters') {
      send({ t: 'counters', asked: message.asked, counters: engine.coordination.counters() })
    } else if (message.cmd === 'shutdown') {
      await shutdown(runtime)
      send({ t: 'inspect', state: engine.coordination.inspect() })
      await engine.close()
      send({ t: 'down' })
      process.disconnect()
    }
  })
}
