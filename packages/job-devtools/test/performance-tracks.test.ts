import {
  dedupeCoordinator,
  installCoordination,
  restartCoordinator,
  withCoordinator,
} from '@vega/job-coordination'
import {
  createRuntime,
  inspect,
  type Runtime,
  run,
  settle,
  subscribe,
  type TaskFn,
} from '@vega/job-core'
import { afterEach, describe, expect, it } from 'vitest'
import {
  createTrackRecorder,
  MAX_EXITING,
  type TrackEntry,
} from '../src/internal/track-recorder.js'
import { installPerformanceTracks, performanceTracksSupported } from '../src/performance-tracks.js'
import * as production from '../src/production.js'

// The recorder is the whole of the feature but the last call
// (performance.measure); here it writes into an array. The browser test
// (e2e/performance-tracks.e2e.ts) reads the same entries back from a real
// Chromium trace.

let runtimes: Runtime[] = []

afterEach(() => {
  for (const runtime of runtimes) expect(inspect(runtime).sizes.liveTasks).toBe(0)
  runtimes = []
})

function recorded(
  options: { name?: string; track?: Parameters<typeof createTrackRecorder>[0]['track'] } = {},
) {
  const runtime = createRuntime({
    name: options.name ?? 'tracks-test',
    plugins: [installCoordination],
  })
  runtimes.push(runtime)
  const entries: TrackEntry[] = []
  const off = subscribe(
    runtime,
    createTrackRecorder({
      group: inspect(runtime).name,
      track: options.track ?? ((task) => task.key ?? task.label ?? 'tasks'),
      now: () => performance.now(),
      write: (entry) => entries.push(entry),
    }),
  )
  return { runtime, entries, off }
}

const names = (entries: readonly TrackEntry[]) => entries.map((entry) => entry.name)
const property = (entry: TrackEntry | undefined, field: string) =>
  entry?.details?.properties.find(([name]) => name === field)?.[1]

/** Every wait and attempt of a task lies inside its task entry. */
function expectNested(entries: readonly TrackEntry[], taskName: string): void {
  const task = entries.find(
    (entry) =>
      entry.name.startsWith(taskName) &&
      !entry.name.includes(' · attempt') &&
      !/ · (queued|parked|retry delay)/.test(entry.name),
  )
  expect(task).toBeDefined()
  for (const entry of entries) {
    if (entry === task || !entry.name.startsWith(`${taskName} · `)) continue
    if (entry.outcome === 'exited') continue
    expect(entry.start).toBeGreaterThanOrEqual(task!.start)
    expect(entry.end).toBeLessThanOrEqual(task!.end)
    expect(entry.track).toBe(task!.track)
  }
}

describe('the track recorder', () => {
  it('draws a retried task as its waits and attempts, inside one task entry, on its label track', async () => {
    const { runtime, entries } = recorded({ name: 'ui' })
    let calls = 0
    const value = await run(
      runtime,
      async () => {
        calls++
        if (calls < 3) throw new Error(`flaky ${calls}`)
        return 'ok'
      },
      { label: 'load', retry: { attempts: 3, delay: 1 } },
    )
    expect(value).toBe('ok')
    expect(names(entries)).toEqual([
      'load #1 · queued',
      'load #1 · attempt 1',
      'load #1 · retry delay',
      'load #1 · queued',
      'load #1 · attempt 2',
      'load #1 · retry delay',
      'load #1 · queued',
      'load #1 · attempt 3',
      'load #1 · 3 attempts',
    ])
    expect(entries.map((entry) => entry.outcome)).toEqual([
      'waited',
      'retried',
      'waited',
      'waited',
      'retried',
      'waited',
      'waited',
      'success',
      'success',
    ])
    expect(property(entries[1], 'error')).toBe('Error: flaky 1')
    expect(property(entries[2], 'after')).toBe('Error: flaky 1')
    expect(property(entries[8], 'attempts')).toBe('3')
    // A wait that ended as usual is plain (drawn cheaply, without details); a failed attempt is not.
    expect(entries[0]?.details).toBeUndefined()
    expect(entries[7]?.details).toBeUndefined()
    expect(property(entries[1], 'outcome')).toBe('retried')
    expect(entries.every((entry) => entry.track === 'load' && entry.group === 'ui')).toBe(true)
    expect(entries[8]?.color).toBe('tertiary')
    expect(entries[1]?.color).toBe('warning')
    // Written when they end, so in the order they end; each starts where the previous ended.
    for (let i = 1; i < 8; i++)
      expect(entries[i]!.start).toBeGreaterThanOrEqual(entries[i - 1]!.end)
    expectNested(entries, 'load #1')
  })

  it('says deduped and restarted, with the task that caused it, on the key track', async () => {
    const { runtime, entries } = recorded()
    const body: TaskFn<string> = async (ctx) => {
      await ctx.sleep(5)
      return 'row'
    }
    const row = withCoordinator(body, dedupeCoordinator, { key: ['row', 1] })
    const first = run(runtime, row, { label: 'row' })
    const second = run(runtime, row, { label: 'row' })
    expect(await first).toBe('row')
    expect(await second).toBe('row')
    const deduped = entries.find((entry) => entry.name.startsWith(`row #${second.id} · deduped`))
    expect(deduped?.name).toBe(`row #${second.id} · deduped into #${first.id}`)
    expect(deduped?.outcome).toBe('deduped')
    expect(property(deduped, 'reason')).toBe('dedupe')
    expect(property(deduped, 'cancelled by')).toBe(`#${first.id}`)
    // The key track: both calls share it, whatever their labels.
    const tracks = new Set(entries.map((entry) => entry.track))
    expect(tracks.size).toBe(1)
    expect([...tracks][0]).toContain('row')
    expect(property(deduped, 'key')).toBe([...tracks][0])

    const search: TaskFn<string> = async (ctx) => {
      await ctx.sleep(20)
      return 'hits'
    }
    const bound = withCoordinator(search, restartCoordinator, { key: 'search' })
    const older = run(runtime, bound, { label: 'search' })
    await new Promise((resolve) => setTimeout(resolve, 5))
    const newer = run(runtime, bound, { label: 'search' })
    expect((await settle(older)).status).toBe('cancelled')
    expect(await newer).toBe('hits')
    const restarted = entries.find((entry) =>
      entry.name.startsWith(`search #${older.id} · restarted`),
    )
    expect(restarted?.name).toBe(`search #${older.id} · restarted by #${newer.id}`)
    const attempt = entries.find((entry) => entry.name === `search #${older.id} · attempt 1`)
    expect(attempt?.outcome).toBe('restarted')
    expect(property(attempt, 'reason')).toBe('abort')
    // The cancelled body left at its next ctx.sleep: drawn from the cancel to its exit.
    const exit = entries.find((entry) =>
      entry.name.startsWith(`search #${older.id} · body exiting`),
    )
    expect(exit?.outcome).toBe('exited')
    expect(exit!.start).toBeGreaterThanOrEqual(restarted!.end)
    expectNested(entries, `search #${older.id}`)
    expectNested(entries, `search #${newer.id}`)
  })

  it('puts errors and cancel reasons of waits in their details', async () => {
    const { runtime, entries } = recorded()
    const failing = run(
      runtime,
      async () => {
        throw new TypeError('bad row')
      },
      { label: 'fail' },
    )
    expect((await settle(failing)).status).toBe('error')
    const task = entries.find((entry) => entry.name === 'fail #1')
    expect(task?.outcome).toBe('error')
    expect(task?.color).toBe('error')
    expect(property(task, 'error')).toBe('TypeError: bad row')

    const parent = run(
      runtime,
      async (ctx) => {
        const child = ctx.run(async (inner) => inner.sleep(10_000), { label: 'child' })
        await ctx.sleep(1)
        return child.id
      },
      { label: 'parent' },
    )
    const childId = await parent
    await new Promise((resolve) => setTimeout(resolve, 5))
    const child = entries.find(
      (entry) => entry.name.startsWith(`child #${childId} ·`) && entry.name.includes('cancelled'),
    )
    expect(child?.name).toBe(`child #${childId} · cancelled (parent)`)
    expect(property(child, 'parent')).toBe(`#${parent.id}`)
    expect(property(child, 'reason')).toBe('parent')
  })

  it('uses options.track, and draws nothing of tasks created before it listened', async () => {
    const runtime = createRuntime({ name: 'late' })
    runtimes.push(runtime)
    const early = run(runtime, (ctx) => ctx.sleep(5), { label: 'early' })
    const entries: TrackEntry[] = []
    const off = subscribe(
      runtime,
      createTrackRecorder({
        group: 'late',
        track: (task) => `lane ${task.id % 2}`,
        now: () => performance.now(),
        write: (entry) => entries.push(entry),
      }),
    )
    await Promise.all([
      early,
      run(runtime, async () => 1, { label: 'a' }),
      run(runtime, async () => 2),
    ])
    off()
    expect(entries.some((entry) => entry.name.startsWith('early'))).toBe(false)
    expect(
      new Set(entries.map((entry) => `${entry.name.split(' · ')[0]} → ${entry.track}`)),
    ).toEqual(new Set(['a #2 → lane 0', 'task #3 → lane 1']))
  })

  it('remembers at most MAX_EXITING cancelled bodies that never reported their exit', async () => {
    const { runtime, entries } = recorded()
    // Cancelled when its slot is granted, before its body enters: it never reports an exit.
    subscribe(runtime, (event) => {
      if (
        event.type === 'task:transition' &&
        event.to === 'running' &&
        cancelOnStart.has(event.taskId)
      ) {
        cancelOnStart.get(event.taskId)?.cancel()
      }
    })
    const cancelOnStart = new Map<number, { cancel(): void }>()
    let release!: () => void
    const held = new Promise<void>((resolve) => {
      release = resolve
    })
    const stubborn = run(runtime, () => held, { label: 'stubborn' })
    await Promise.resolve()
    stubborn.cancel()
    const never: Promise<unknown>[] = []
    // Parked behind the gate, they get their slots after it succeeds: outside run().
    const gate = run(runtime, async () => 'open', { label: 'gate' })
    for (let i = 0; i < MAX_EXITING; i++) {
      const task = run(runtime, async () => 1, { label: 'never', dependsOn: [gate] })
      cancelOnStart.set(task.id, task)
      never.push(settle(task))
    }
    await Promise.all(never)
    release()
    await settle(stubborn)
    await new Promise((resolve) => setTimeout(resolve, 5))
    expect(
      entries.filter((entry) => entry.name.startsWith('never') && entry.outcome === 'cancelled')
        .length,
    ).toBeGreaterThan(0)
    // The oldest remembered body was forgotten to keep the bound: its exit is not drawn.
    expect(
      entries.some((entry) => entry.name.startsWith(`stubborn #${stubborn.id} · body exiting`)),
    ).toBe(false)
  })

  it('draws the exit of a cancelled body it still remembers', async () => {
    const { runtime, entries } = recorded()
    let release!: () => void
    const held = new Promise<void>((resolve) => {
      release = resolve
    })
    const stubborn = run(runtime, () => held, { label: 'stubborn' })
    await Promise.resolve()
    stubborn.cancel()
    release()
    await new Promise((resolve) => setTimeout(resolve, 5))
    expect(names(entries)).toContain(
      `stubborn #${stubborn.id} · body exiting after cancelled (abort)`,
    )
  })

  it('reports a track function that returns no name, naming the task', async () => {
    const { runtime } = recorded({ track: () => '' })
    const reported: unknown[] = []
    subscribe(runtime, (event) => {
      if (event.type === 'runtime:listener-error') reported.push(event.error)
    })
    await run(runtime, async () => 1)
    expect(String(reported[0])).toMatch(
      /track\(task\) must return a non-empty string, got "" for task #1/,
    )
  })
})

describe('installPerformanceTracks', () => {
  it('installs nothing where the Performance panel cannot read the entries (Node)', async () => {
    expect(performanceTracksSupported()).toBe(false)
    const runtime = createRuntime()
    const before = inspect(runtime).sizes.listeners
    const uninstall = installPerformanceTracks(runtime)
    expect(inspect(runtime).sizes.listeners).toBe(before)
    await run(runtime, async () => 1)
    uninstall()
  })

  it('fails early on bad input, naming the option and the value', () => {
    const runtime = createRuntime()
    expect(() => installPerformanceTracks({} as Runtime)).toThrow(
      /installPerformanceTracks\(runtime, options\): runtime must be a runtime from createRuntime\(\).*got an empty object/,
    )
    expect(() => installPerformanceTracks(runtime, { colour: 'red' } as never)).toThrow(
      /unknown option "colour"; known options: group, track/,
    )
    expect(() => installPerformanceTracks(runtime, { group: '' })).toThrow(
      /options\.group must be a non-empty string, got ""/,
    )
    expect(() => installPerformanceTracks(runtime, { track: 'key' as never })).toThrow(
      /options\.track must be a function \(task\) => string, got "key"/,
    )
  })

  it('is a no-op in the production entry, with the same names', () => {
    const runtime = createRuntime()
    expect(production.performanceTracksSupported()).toBe(false)
    const uninstall = production.installPerformanceTracks(runtime, { group: 'x' })
    expect(inspect(runtime).sizes.listeners).toBe(0)
    uninstall()
  })
})
