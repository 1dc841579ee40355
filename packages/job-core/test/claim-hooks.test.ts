import { afterEach, describe, expect, it, vi } from 'vitest'
import {
  type ClaimOptions,
  counts,
  createRuntime,
  createTaskTag,
  type DispatchHandler,
  type Plugin,
  run,
  settle,
  tagTaskFn,
  whenIdle,
} from '../src/index.js'
import { flush, gate } from './helpers.js'

afterEach(() => {
  vi.restoreAllMocks()
})

interface Binding {
  readonly name: string
  readonly decide: 'proceed' | 'skip' | 'park' | 'throw'
}

const hookTag = createTaskTag<Binding>('hookPlugin')
const bound = <T>(body: () => T | Promise<T>, binding: Binding) => tagTaskFn(body, hookTag, binding)

/** A plugin that decides as each binding says and records what its claim's hooks are told. */
function hookPlugin(options: Partial<ClaimOptions<Binding>> = {}) {
  const told: string[] = []
  const parked: Array<Parameters<DispatchHandler<Binding>>[0]> = []
  const plugin: Plugin = {
    name: 'hookPlugin',
    install(host) {
      host.claim(
        hookTag,
        (request) => {
          const { decide } = request.binding
          if (decide === 'skip') return request.skip('not-today')
          if (decide === 'throw') throw new Error('handler broke')
          if (decide === 'park') {
            request.park()
            parked.push(request)
            return request.result
          }
          return request.proceed()
        },
        {
          onSettled: (task, binding) =>
            told.push(`settled ${binding.name} #${task.id} ${task.state}`),
          onExited: (task, binding) => told.push(`exited ${binding.name} #${task.id}`),
          ...options,
        },
      )
    },
  }
  return { plugin, told, parked }
}

describe('ClaimOptions.onSettled and onExited', () => {
  it('tell every task the handler decided, once each, with its binding: settled, then exited', async () => {
    const { plugin, told, parked } = hookPlugin()
    const runtime = createRuntime({ plugins: [plugin], onUnobservedError: false })
    const ran = run(
      runtime,
      bound(async () => 1, { name: 'a', decide: 'proceed' }),
    )
    const skipped = run(
      runtime,
      bound(() => 2, { name: 'b', decide: 'skip' }),
    )
    const failed = run(
      runtime,
      bound(() => 3, { name: 'c', decide: 'throw' }),
    )
    const waiting = run(
      runtime,
      bound(() => 4, { name: 'd', decide: 'park' }),
    )
    await settle(ran)
    await settle(skipped)
    await settle(failed)
    parked[0]!.proceed()
    await settle(waiting)
    expect(told).toEqual([
      `settled b #${skipped.id} cancelled`,
      `exited b #${skipped.id}`,
      `settled c #${failed.id} error`,
      `exited c #${failed.id}`,
      `settled a #${ran.id} success`,
      `exited a #${ran.id}`,
      `settled d #${waiting.id} success`,
      `exited d #${waiting.id}`,
    ])
  })

  it('tells a cancelled body that ignores its signal exited only when it leaves', async () => {
    const { plugin, told } = hookPlugin()
    const runtime = createRuntime({ plugins: [plugin] })
    const body = gate()
    const task = run(
      runtime,
      bound(() => body.promise, { name: 'slow', decide: 'proceed' }),
    )
    task.cancel()
    expect(told).toEqual([`settled slow #${task.id} cancelled`])
    body.open()
    await whenIdle(runtime)
    expect(told).toEqual([`settled slow #${task.id} cancelled`, `exited slow #${task.id}`])
  })

  it('tells nothing of plain tasks or of tasks no handler of the claim decided', async () => {
    const { plugin, told } = hookPlugin()
    const routeTag = createTaskTag<string>('routeOnly')
    const runtime = createRuntime({
      plugins: [plugin, { name: 'routeOnly', install: (host) => host.claim(routeTag) }],
    })
    await run(runtime, () => 1)
    await run(
      runtime,
      tagTaskFn(() => 2, routeTag, 'r'),
    )
    expect(told).toEqual([])
  })

  it('runs before the callbacks of host.onSettled and host.onExited', async () => {
    const order: string[] = []
    let hostRef: Parameters<Plugin['install']>[0] | undefined
    const { plugin } = hookPlugin({
      onSettled: () => order.push('claim onSettled'),
      onExited: () => order.push('claim onExited'),
    })
    const runtime = createRuntime({
      plugins: [plugin, { name: 'grab', install: (host) => void (hostRef = host) }],
    })
    const task = run(
      runtime,
      bound(async () => 1, { name: 'a', decide: 'proceed' }),
    )
    hostRef!.onSettled(task, () => order.push('host.onSettled'))
    hostRef!.onExited(task, () => order.push('host.onExited'))
    await task
    expect(order).toEqual(['claim onSettled', 'host.onSettled', 'claim onExited', 'host.onExited'])
  })

  it('a hook that throws is reported naming the plugin; the ending, the slot and the other hooks go on', async () => {
    const errors = vi.spyOn(console, 'error').mockImplementation(() => {})
    const exited: number[] = []
    const { plugin } = hookPlugin({
      onSettled: () => {
        throw new Error('settle hook broke')
      },
      onExited: (task) => {
        exited.push(task.id)
        throw new Error('exit hook broke')
      },
    })
    const runtime = createRuntime({ plugins: [plugin], concurrency: 1 })
    const first = run(
      runtime,
      bound(async () => 1, { name: 'a', decide: 'proceed' }),
    )
    const second = run(
      runtime,
      bound(async () => 2, { name: 'b', decide: 'proceed' }),
    )
    expect(await first).toBe(1)
    expect(await second).toBe(2)
    await whenIdle(runtime)
    expect(exited).toEqual([first.id, second.id])
    expect(counts(runtime)).toEqual({ live: 0, parked: 0, queued: 0, running: 0, exiting: 0 })
    expect(errors.mock.calls.map((call) => String(call[0]))).toEqual([
      `[@vega/job-core] hookPlugin's claim onSettled threw for task #${first.id}; the task's ending went on.`,
      `[@vega/job-core] hookPlugin's claim onExited threw for task #${first.id}; the task's ending went on.`,
      `[@vega/job-core] hookPlugin's claim onSettled threw for task #${second.id}; the task's ending went on.`,
      `[@vega/job-core] hookPlugin's claim onExited threw for task #${second.id}; the task's ending went on.`,
    ])
  })

  it('a host.onSettled callback that throws is reported, and the callbacks after it still run', async () => {
    const errors = vi.spyOn(console, 'error').mockImplementation(() => {})
    let hostRef: Parameters<Plugin['install']>[0] | undefined
    const runtime = createRuntime({
      plugins: [{ name: 'grab', install: (host) => void (hostRef = host) }],
    })
    const body = gate()
    const task = run(runtime, () => body.promise)
    const after: string[] = []
    hostRef!.onSettled(task, () => {
      throw new Error('callback broke')
    })
    hostRef!.onSettled(task, () => after.push('ran'))
    body.open()
    await task
    await flush()
    expect(after).toEqual(['ran'])
    expect(String(errors.mock.calls[0]![0])).toMatch(/a host\.onSettled callback threw for task #/)
    expect(counts(runtime).live).toBe(0)
  })

  it('refuses a hook that is not a function, and hooks without a handler', () => {
    const tryClaim = (handler: DispatchHandler<Binding> | undefined, options: object) => () =>
      createRuntime({
        plugins: [{ name: 'hookPlugin', install: (host) => host.claim(hookTag, handler, options) }],
      })
    expect(tryClaim((r) => r.proceed(), { onSettled: 'log' })).toThrow(
      /host\.claim\(tag, handler, \{ onSettled \}\) for hookPlugin: onSettled must be a function \(task, binding\) => void, got/,
    )
    expect(tryClaim((r) => r.proceed(), { onExited: 5 })).toThrow(/onExited must be a function/)
    expect(tryClaim(undefined, { onExited: () => {} })).toThrow(
      /host\.claim\(tag, handler, \{ onExited \}\) for hookPlugin: onExited is told of the tasks the handler decides; pass the handler too\./,
    )
  })
})
