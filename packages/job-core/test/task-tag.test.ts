import { setFlagsFromString } from 'node:v8'
import { runInNewContext } from 'node:vm'
import { describe, expect, it } from 'vitest'
import {
  type BackendJob,
  createRuntime,
  createTaskTag,
  type Plugin,
  readTaskTag,
  run,
  type TaskTag,
  tagTaskFn,
} from '../src/index.js'
import { BINDINGS, RAW, rawOf, readBindings } from '../src/internal/bindings.js'
import { gate, spyOnEnqueue } from './helpers.js'

type Route = { readonly queue: string }

const sharedTag = createTaskTag<Route>('installShared', { sharedBindings: true })
const ownTag = createTaskTag<Route>('installOwn')
const otherTag = createTaskTag<{ n: number }>('installOther')

/** Claims the given tags without a handler: tagged tasks run as usual. */
function claiming(...tags: TaskTag<unknown>[]): Plugin {
  return {
    name: 'claiming',
    install(host) {
      for (const tag of tags) host.claim(tag)
    },
  }
}

describe('createTaskTag', () => {
  it('refuses a sharedBindings that is not a boolean', () => {
    expect(() =>
      createTaskTag('installX', { sharedBindings: 'yes' as unknown as boolean }),
    ).toThrow(TypeError)
    expect(() => createTaskTag('installX', { sharedBindings: 'yes' as never })).toThrow(
      /sharedBindings must be a boolean, got string/,
    )
  })

  it('says whether its bindings are shared (false unless asked)', () => {
    expect(sharedTag.sharedBindings).toBe(true)
    expect(ownTag.sharedBindings).toBe(false)
    expect(Object.isFrozen(sharedTag)).toBe(true)
  })
})

describe('tagTaskFn', () => {
  it('a sharedBindings tag: taskFns tagged with one binding object share its record, and each runs its own body', async () => {
    const route: Route = Object.freeze({ queue: 'mail' })
    const a = tagTaskFn(() => 'a', sharedTag, route)
    const b = tagTaskFn(() => 'b', sharedTag, route)
    expect(readBindings(a)).toBe(readBindings(b))
    expect(readTaskTag(a, sharedTag)).toBe(route)
    expect(readTaskTag(b, sharedTag)).toBe(route)
    // A binding of equal content but another identity gets a record of its own.
    const c = tagTaskFn(() => 'c', sharedTag, { queue: 'mail' })
    expect(readBindings(c)).not.toBe(readBindings(a))

    const runtime = createRuntime({ plugins: [claiming(sharedTag as TaskTag<unknown>)] })
    expect(await run(runtime, a)).toBe('a')
    expect(await run(runtime, b)).toBe('b')
    expect(await run(runtime, c)).toBe('c')
  })

  it('any other tag: each taskFn has its own record, even for one binding object', () => {
    const route: Route = Object.freeze({ queue: 'mail' })
    const a = tagTaskFn(() => 'a', ownTag, route)
    const b = tagTaskFn(() => 'b', ownTag, route)
    expect(readBindings(a)).not.toBe(readBindings(b))
    expect(readTaskTag(a, ownTag)).toBe(route)
  })

  it('a primitive binding of a sharedBindings tag is carried as well (nothing to share it by)', () => {
    const tag = createTaskTag<string>('installPrimitive', { sharedBindings: true })
    const a = tagTaskFn(() => 1, tag, 'q')
    const b = tagTaskFn(() => 2, tag, 'q')
    expect(readTaskTag(a, tag)).toBe('q')
    expect(readTaskTag(b, tag)).toBe('q')
  })

  it('keeps the undecorated function: a tagged taskFn calls it, rawOf returns it, retagging binds it again', async () => {
    const seen: unknown[] = []
    const raw = (ctx: unknown) => {
      seen.push(ctx)
      return 'raw'
    }
    const route: Route = Object.freeze({ queue: 'q' })
    const once = tagTaskFn(raw, sharedTag, route)
    expect(rawOf(once)).toBe(raw)
    expect((once as never)[RAW]).toBe(raw)
    expect(once('ctx' as never)).toBe('raw')
    expect(seen).toEqual(['ctx'])

    // A second tag on top: both bindings read, the same undecorated function.
    const twice = tagTaskFn(once, otherTag, { n: 2 })
    expect(rawOf(twice)).toBe(raw)
    expect(readTaskTag(twice, sharedTag)).toBe(route)
    expect(readTaskTag(twice, otherTag)).toEqual({ n: 2 })
    expect(readBindings(twice)?.inner).toBe(readBindings(once))

    // Rebinding the shared tag over the other one replaces it and keeps the other.
    const other: Route = Object.freeze({ queue: 'r' })
    const rebound = tagTaskFn(twice, sharedTag, other)
    expect(readTaskTag(rebound, sharedTag)).toBe(other)
    expect(readTaskTag(rebound, otherTag)).toEqual({ n: 2 })
    expect(rawOf(rebound)).toBe(raw)

    const runtime = createRuntime({
      plugins: [claiming(sharedTag as TaskTag<unknown>, otherTag as TaskTag<unknown>)],
    })
    expect(await run(runtime, rebound)).toBe('raw')
    expect(seen).toHaveLength(2)
  })

  it('leaves the original taskFn untouched, and a plain function has no raw of its own', () => {
    const raw = () => 1
    tagTaskFn(raw, sharedTag, Object.freeze({ queue: 'q' }))
    expect(Object.getOwnPropertySymbols(raw)).toEqual([])
    expect(readBindings(raw)).toBeUndefined()
    expect(rawOf(raw)).toBe(raw)
  })

  it('still reads the tags an older copy of core wrote ({ raw, entries })', async () => {
    const raw = () => 'old'
    const legacy = raw.bind(undefined) as typeof raw & Record<symbol, unknown>
    legacy[BINDINGS] = { raw, entries: [{ tag: ownTag, binding: { queue: 'x' } }] }
    expect(readTaskTag(legacy, ownTag)).toEqual({ queue: 'x' })
    expect(rawOf(legacy)).toBe(raw)
    const retagged = tagTaskFn(legacy, otherTag, { n: 1 })
    expect(rawOf(retagged)).toBe(raw)
    expect(readTaskTag(retagged, ownTag)).toEqual({ queue: 'x' })
    const runtime = createRuntime({
      plugins: [claiming(ownTag as TaskTag<unknown>, otherTag as TaskTag<unknown>)],
    })
    expect(await run(runtime, retagged)).toBe('old')
  })
})

describe('a backend job of a tagged task', () => {
  /** A runtime with one slot whose backend records each job it is handed. */
  function recorded(retry = false) {
    const jobs: BackendJob[] = []
    const runtime = createRuntime({
      concurrency: 1,
      plugins: [
        claiming(ownTag as TaskTag<unknown>, sharedTag as TaskTag<unknown>),
        {
          name: 'spy',
          install(host) {
            host.useBackend((inner) => spyOnEnqueue(inner, (job) => jobs.push(job)))
          },
        },
      ],
    })
    const options = retry ? { retry: { attempts: 2, delay: 0 } } : undefined
    return { jobs, runtime, options }
  }

  it('reads its tags with readTaskTag(job, tag), on a first attempt and on a retry', async () => {
    const { jobs, runtime, options } = recorded(true)
    let calls = 0
    const route = { queue: 'mail' }
    const tagged = tagTaskFn(
      () => {
        calls++
        if (calls === 1) throw new Error('first fails')
        return 'sent'
      },
      ownTag,
      route,
    )
    expect(await run(runtime, tagged, options)).toBe('sent')
    expect(jobs).toHaveLength(2)
    for (const job of jobs) {
      expect(readTaskTag(job, ownTag)).toBe(route)
      expect(readTaskTag(job, otherTag)).toBeUndefined()
    }
  })

  it('hands out as taskFn a function with the same body and tags, rebuilt (not the one passed to run())', async () => {
    const { jobs, runtime } = recorded()
    const route = Object.freeze({ queue: 'q' })
    const body = () => 'body ran'
    const tagged = tagTaskFn(body, sharedTag, route)
    await run(runtime, tagged)
    const taskFn = jobs[0]!.taskFn
    expect(taskFn).not.toBe(tagged)
    expect(readTaskTag(taskFn, sharedTag)).toBe(route)
    expect(rawOf(taskFn)).toBe(body)
    // Run again, it is the same task: same tag, same body.
    expect(await run(runtime, taskFn)).toBe('body ran')
    expect(readTaskTag(jobs[1]!, sharedTag)).toBe(route)
  })

  it('refuses, with a TypeError, a target that is neither a taskFn nor a job', () => {
    for (const bad of [undefined, null, 42, 'fn', {}]) {
      expect(() => readTaskTag(bad as never, ownTag)).toThrow(
        /^readTaskTag\(target, tag\): target must be a taskFn or a backend's job \(with a taskFn\), got /,
      )
    }
  })

  it('reads a job from elsewhere (not this kernel’s) through its taskFn', () => {
    const route = { queue: 'x' }
    const foreign: BackendJob = {
      task: undefined as never,
      priority: 0,
      taskFn: tagTaskFn(() => 1, ownTag, route),
      start: () => {},
    }
    expect(readTaskTag(foreign, ownTag)).toBe(route)
  })

  it('does not keep the tagged function a waiting task was run with', async () => {
    setFlagsFromString('--expose-gc')
    const gc = runInNewContext('gc') as () => void
    const { runtime } = recorded()
    const door = gate()
    const first = run(runtime, () => door.promise)
    let refs: WeakRef<object>[] = []
    const waiting = Array.from({ length: 20 }, (_, i) => {
      const tagged = tagTaskFn(() => i, ownTag, { queue: `q${i}` })
      refs.push(new WeakRef(tagged))
      return run(runtime, tagged)
    })
    // A WeakRef holds its target until the current job ends.
    await new Promise((resolve) => setImmediate(resolve))
    gc()
    expect(waiting.every((task) => task.state === 'queued')).toBe(true)
    expect(refs.filter((ref) => ref.deref() !== undefined)).toHaveLength(0)
    refs = []
    door.open()
    await first
    expect(await Promise.all(waiting)).toEqual(Array.from({ length: 20 }, (_, i) => i))
  })
})

describe('createTaskTag options are checked', () => {
  it('a misspelled or malformed option is a TypeError that names it', () => {
    expect(() => createTaskTag('p', { kye: () => 'k' } as never)).toThrow(
      /createTaskTag\(plugin, options\): unknown option 'kye'; did you mean 'key'\?/,
    )
    expect(() => createTaskTag('p', { key: 'k' } as never)).toThrow(
      /createTaskTag\(plugin, \{ key \}\): key must be a function .* got 'k'/,
    )
    expect(() => createTaskTag('p', null as never)).toThrow(/options must be an object/)
  })
})
