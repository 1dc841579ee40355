import { createRuntime, run } from '@vega/job-core'
import { describe, expect, it } from 'vitest'
import {
  type CoordinationContext,
  type CoordinationIntent,
  createSerializeCoordinator,
  defineCoordinator,
  installCoordination,
  withCoordinator,
} from '../src/index.js'

// A coordinator's `ctx` is CoordinationContext and nothing more: the scope,
// the runtime behind it, the raw request and the decision stay out of reach.

/** The members CoordinationContext declares; the type test below keeps this list honest. */
const CONTEXT_MEMBERS = [
  'taskFn',
  'options',
  'hash',
  'intent',
  'task',
  'peers',
  'proceed',
  'reuse',
  'cancelPeer',
  'emit',
] as const satisfies readonly (keyof CoordinationContext)[]

type Missing = Exclude<keyof CoordinationContext, (typeof CONTEXT_MEMBERS)[number]>
const everyMemberListed: [Missing] extends [never] ? true : Missing = true

const INTENT_ONLY = ['parkCoordinator', 'skip', 'fail'] as const satisfies readonly Exclude<
  keyof CoordinationIntent,
  'id'
>[]

/** Every property name reachable on `value` and its prototypes, up to Object.prototype. */
function reachableNames(value: object): string[] {
  const names = new Set<string>()
  for (
    let layer: object | null = value;
    layer !== null && layer !== Object.prototype;
    layer = Object.getPrototypeOf(layer) as object | null
  ) {
    for (const key of Reflect.ownKeys(layer)) names.add(String(key))
  }
  names.delete('constructor')
  return [...names].sort()
}

async function capture(): Promise<CoordinationContext> {
  const runtime = createRuntime({ plugins: [installCoordination] })
  let seen: CoordinationContext | undefined
  const spy = defineCoordinator('spy', (ctx) => {
    seen = ctx
    return ctx.proceed()
  })
  await run(
    runtime,
    withCoordinator(async () => 1, spy, { key: 'sealed' }),
  )
  return seen!
}

describe('a coordinator sees CoordinationContext only', () => {
  it('ctx has no own keys, and nothing beyond the context members on its prototypes', async () => {
    expect(everyMemberListed).toBe(true)
    const ctx = await capture()
    expect(Object.keys(ctx)).toEqual([])
    expect(Reflect.ownKeys(ctx)).toEqual([])
    expect(reachableNames(ctx)).toEqual([...CONTEXT_MEMBERS].sort())
  })

  it('the scope, the runtime, the request and the decision are not reachable', async () => {
    const ctx = (await capture()) as unknown as Record<string, unknown>
    for (const internal of ['scope', 'request', 'decision', 'coordinator', 'caller', 'view']) {
      expect(internal in ctx, internal).toBe(false)
      expect(ctx[internal], internal).toBeUndefined()
    }
  })

  it('ctx cannot be written to', async () => {
    const ctx = (await capture()) as unknown as Record<string, unknown>
    expect(Object.isFrozen(ctx)).toBe(true)
    expect(() => {
      ctx.decision = 'proceed'
    }).toThrow(TypeError)
    expect(() => {
      ctx.hash = 'another key'
    }).toThrow(TypeError)
    expect(ctx.decision).toBeUndefined()
    expect(ctx.hash).toBe('"sealed"')
  })

  it('ctx.intent leads nowhere further: only Task members and its three moves', async () => {
    const ctx = await capture()
    const intent = ctx.intent
    expect(Object.keys(intent)).toEqual([])
    expect(Object.isFrozen(intent)).toBe(true)
    const taskMembers = [
      'id',
      'label',
      'state',
      'cancelReason',
      'cancelledBy',
      'attempt',
      'promise',
      'cancel',
      'then',
      'catch',
      'finally',
    ]
    expect(reachableNames(intent)).toEqual([...taskMembers, ...INTENT_ONLY].sort())
    expect('coordination' in intent).toBe(false)
  })

  it("a copy of ctx is not a context: a built-in's per-runtime state refuses it", async () => {
    const runtime = createRuntime({ plugins: [installCoordination] })
    const serialize = createSerializeCoordinator()
    const forged = defineCoordinator('forged', (ctx) =>
      serialize.coordinator.coordinate({
        ...ctx,
        hash: ctx.hash,
        peers: () => ctx.peers(),
        proceed: () => ctx.proceed(),
      } as CoordinationContext),
    )
    const task = run(
      runtime,
      withCoordinator(async () => 1, forged, { key: 'k' }),
    )
    await expect(task.promise).rejects.toThrow(
      /keeps per-runtime state and only runs inside a runtime/,
    )
  })
})
