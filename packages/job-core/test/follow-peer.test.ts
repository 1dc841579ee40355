import { setFlagsFromString } from 'node:v8'
import { runInNewContext } from 'node:vm'
import { describe, expect, it } from 'vitest'
import {
  CancelledError,
  createRuntime,
  createTaskTag,
  inspect,
  type Plugin,
  type PluginHost,
  PluginMissingError,
  type Runtime,
  type RuntimeEvent,
  run,
  settle,
  shutdown,
  subscribe,
  type Task,
  tagTaskFn,
} from '../src/index.js'
import { gate } from './helpers.js'

// A singleflight plugin: the first call of a key runs, later calls follow it
// while it lives. Its handler and its followPeer make the same decision, so
// whether a call took the shortcut must be invisible through the public API.
const flightTag = createTaskTag<{ key: string }>('installFlight', {
  key: (binding) => binding.key,
})

interface Flight {
  readonly plugin: Plugin
  /** How many decisions the handler made (the shortcut skips it). */
  readonly handled: { count: number }
}

function flightPlugin(shortcut: boolean): Flight {
  const handled = { count: 0 }
  const plugin: Plugin = {
    name: 'installFlight',
    install(host: PluginHost) {
      const leaders = new Map<string, Task<unknown>>()
      host.claim(
        flightTag,
        (request) => {
          handled.count++
          const leader = leaders.get(request.binding.key)
          if (leader !== undefined) return request.follow(leader, 'dedupe')
          leaders.set(request.binding.key, request.task)
          host.onSettled(request.task, () => leaders.delete(request.binding.key))
          return request.proceed()
        },
        shortcut ? { followPeer: (binding) => leaders.get(binding.key) } : undefined,
      )
    },
  }
  return { plugin, handled }
}

const flight = <T>(key: string, body: () => T | Promise<T>) => tagTaskFn(body, flightTag, { key })

/** What a caller can learn of a task through the public API, once it has ended. */
async function facts(task: Task<unknown>) {
  const outcome = await settle(task)
  let value: unknown
  let error: unknown
  try {
    value = await task
  } catch (caught) {
    error = caught
  }
  return {
    id: task.id,
    label: task.label,
    state: task.state,
    cancelReason: task.cancelReason,
    cancelledBy: task.cancelledBy,
    attempt: task.attempt,
    outcome: outcome.status === 'cancelled' ? [outcome.status, outcome.reason] : [outcome.status],
    value,
    error: error === undefined ? undefined : String(error),
  }
}

/** Three keys, merged calls, a dependent of a merged call, then a cancel. */
async function scenario(runtime: Runtime) {
  const door = gate()
  const leader = run(
    runtime,
    flight('a', () => door.promise.then(() => 'A')),
    { label: 'lead' },
  )
  const merged = run(
    runtime,
    flight('a', () => 'never'),
    { label: 'follower' },
  )
  const other = run(
    runtime,
    flight('b', () => 'B'),
  )
  const mergedAgain = run(
    runtime,
    flight('a', () => 'never'),
  )
  const dependent = run(runtime, () => 'dep', { dependsOn: [merged] })
  const promiseShared = merged.promise === leader.promise
  merged.cancel()
  door.open()
  const all = [leader, merged, other, mergedAgain, dependent]
  const result = []
  for (const task of all) result.push(await facts(task))
  return { result, promiseShared, live: inspect(runtime).sizes.liveTasks }
}

describe('ClaimOptions.followPeer: a call merged before its task is built', () => {
  it('reads exactly as a call the handler merged', async () => {
    const long = flightPlugin(false)
    const short = flightPlugin(true)
    const viaHandler = await scenario(createRuntime({ plugins: [long.plugin] }))
    const viaShortcut = await scenario(createRuntime({ plugins: [short.plugin] }))
    expect(viaShortcut).toEqual(viaHandler)
    expect(viaShortcut.promiseShared).toBe(true)
    expect(viaShortcut.result[1]).toMatchObject({
      label: 'follower',
      state: 'cancelled',
      cancelReason: 'dedupe',
      cancelledBy: viaShortcut.result[0]!.id,
      attempt: 0,
      value: 'A',
    })
    // The dependent of a merged call is cancelled as a dependency, both ways.
    expect(viaShortcut.result[4]).toMatchObject({ outcome: ['cancelled', 'dependency'] })
    expect(viaShortcut.live).toBe(0)
    // The shortcut really skipped the handler for the two merged calls.
    expect(long.handled.count).toBe(4)
    expect(short.handled.count).toBe(2)
  })

  it('a plugin may still watch a merged call: onSettled, onExited and owns answer for it', async () => {
    let host!: PluginHost
    const flightWithHost = flightPlugin(true)
    const watcher: Plugin = {
      name: 'watcher',
      install(h) {
        host = h
      },
    }
    const runtime = createRuntime({ plugins: [flightWithHost.plugin, watcher] })
    const door = gate<string>()
    const leader = run(
      runtime,
      flight('k', () => door.promise),
    )
    const merged = run(
      runtime,
      flight('k', () => 'never'),
    )
    expect(flightWithHost.handled.count).toBe(1)
    const seen: string[] = []
    host.onSettled(merged, (task) => seen.push(`settled #${task.id} ${task.state}`))
    host.onExited(merged, (task) => seen.push(`exited #${task.id}`))
    expect(host.owns(merged)).toBe(true)
    expect(seen).toEqual([`settled #${merged.id} cancelled`, `exited #${merged.id}`])
    merged.cancel()
    expect(merged.state).toBe('cancelled')
    door.open('done')
    await leader
    expect(await merged.finally(() => seen.push('finally'))).toBe('done')
    expect(await merged.catch(() => 'caught')).toBe('done')
    expect(seen.at(-1)).toBe('finally')
  })

  it('takes the long way whenever the difference could show', async () => {
    const short = flightPlugin(true)
    const runtime = createRuntime({ plugins: [short.plugin] })
    const door = gate()
    const leader = run(
      runtime,
      flight('k', () => door.promise),
    )
    expect(short.handled.count).toBe(1)

    // A listener sees every task's events: the handler decides.
    const events: RuntimeEvent[] = []
    const stop = subscribe(runtime, (event) => events.push(event))
    const heard = run(
      runtime,
      flight('k', () => 'never'),
    )
    stop()
    expect(short.handled.count).toBe(2)
    expect(events.map((event) => event.type)).toEqual(['task:created', 'task:transition'])
    expect(heard.cancelReason).toBe('dedupe')

    // A signal, a parent (ctx.run) and a second tag each take the long way.
    run(
      runtime,
      flight('k', () => 'never'),
      { signal: new AbortController().signal },
    )
    expect(short.handled.count).toBe(3)
    const otherTag = createTaskTag<number>('installOther')
    const outer = run(runtime, (ctx) => ctx.run(flight('k', () => 'never')).cancelReason)
    expect(await outer).toBe('dedupe')
    expect(short.handled.count).toBe(4)
    const layered = run(
      runtime,
      tagTaskFn(
        flight('k', () => 'never'),
        otherTag,
        1,
      ),
    )
    expect(layered.state).toBe('error')
    await expect(layered.promise).rejects.toBeInstanceOf(PluginMissingError)
    expect(short.handled.count).toBe(4)

    // Shutting down: the call is cancelled as shutdown, not merged.
    door.open()
    await leader
    const done = shutdown(runtime)
    const late = run(
      runtime,
      flight('k', () => 'never'),
    )
    expect(late.cancelReason).toBe('shutdown')
    await done
  })

  it('a peer of another runtime, or none, goes to the handler', async () => {
    const foreign = createRuntime()
    const stranger = run(foreign, () => new Promise(() => {}))
    let handled = 0
    const runtime = createRuntime({
      plugins: [
        {
          name: 'installFlight',
          install(host) {
            host.claim(
              flightTag,
              (request) => {
                handled++
                return request.binding.key === 'skip'
                  ? request.skip('test-skip')
                  : request.proceed()
              },
              { followPeer: (binding) => (binding.key === 'foreign' ? stranger : undefined) },
            )
          },
        },
      ],
    })
    expect(
      await run(
        runtime,
        flight('foreign', () => 1),
      ),
    ).toBe(1)
    const skipped = run(
      runtime,
      flight('skip', () => 2),
    )
    await expect(skipped.promise).rejects.toBeInstanceOf(CancelledError)
    expect(handled).toBe(2)
    stranger.cancel()
  })

  it('bad claim options fail at install with what to pass', () => {
    const install = (options: unknown, handler: unknown = () => undefined) =>
      installWith(handler, options)
    const installWith = (handler: unknown, options: unknown) =>
      createRuntime({
        plugins: [
          {
            name: 'installFlight',
            install: (host) => host.claim(flightTag, handler as never, options as never),
          },
        ],
      })
    expect(() => install(7)).toThrow(/options must be an object such as \{ followPeer \}/)
    expect(() => install({ followPeer: 'leaders' })).toThrow(
      /followPeer must be a function \(binding\) => peer \| undefined/,
    )
    expect(() => install({ followPeer: () => undefined, followReason: '' })).toThrow(
      /followReason must be a non-empty cancel reason/,
    )
    expect(() => install({ follow: () => undefined })).toThrow(TypeError)
    expect(() => installWith(undefined, { followPeer: () => undefined })).toThrow(
      /followPeer is a shortcut of the handler's own decision; pass the handler too/,
    )
    expect(() => install({ followPeer: () => undefined, followReason: 'merged' })).not.toThrow()
  })
})

describe('what a followed call keeps', () => {
  it('not the function it was run with (a fresh one per call here), while its peer runs; a plugin still watches it', async () => {
    setFlagsFromString('--expose-gc')
    const gc = runInNewContext('gc') as () => void
    let host: PluginHost | undefined
    const { plugin, handled } = flightPlugin(true)
    const runtime = createRuntime({
      plugins: [plugin, { name: 'watch', install: (h) => void (host = h) }],
    })
    const door = gate()
    const leader = run(
      runtime,
      flight('k', () => door.promise.then(() => 'shared')),
    )
    let refs: WeakRef<object>[] = []
    const merged = Array.from({ length: 20 }, () => {
      const taskFn = flight('k', () => 'never')
      refs.push(new WeakRef(taskFn))
      return run(runtime, taskFn)
    })
    expect(handled.count).toBe(1)
    // A WeakRef holds its target until the current job ends.
    await new Promise((resolve) => setImmediate(resolve))
    gc()
    expect(refs.filter((ref) => ref.deref() !== undefined)).toHaveLength(0)
    refs = []
    expect(host!.owns(merged[0]!)).toBe(true)
    door.open()
    expect(await leader).toBe('shared')
    expect(await Promise.all(merged)).toEqual(merged.map(() => 'shared'))
    expect(merged.every((task) => task.cancelReason === 'dedupe')).toBe(true)
  })
})
