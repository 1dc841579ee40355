import { describe, expect, it } from 'vitest'
import {
  createRuntime,
  createTaskTag,
  type Plugin,
  readTaskTag,
  run,
  type TaskTag,
  tagTaskFn,
} from '../src/index.js'
import { BINDINGS, RAW, rawOf, readBindings } from '../src/internal/bindings.js'

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
