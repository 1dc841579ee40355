import {
  dedupeCoordinator,
  keepLatestCoordinator,
  restartCoordinator,
  withCoordinator,
} from '@vega/job-coordination'
import { createTestClock, debounce, run, settle, withShaper } from '@vega/job-core'
import { afterAll, describe, expect, it } from 'vitest'
import { deferred, spanId, traced, useAsyncContext } from './support.js'

const disableContext = useAsyncContext()
afterAll(disableContext)

describe('links across shared work', () => {
  it('links a dedupe joiner to the task it joined (reuse)', async () => {
    const { otel, runtime } = traced()
    const gate = deferred<string>()
    const load = withCoordinator(() => gate.promise, dedupeCoordinator, { key: ['doc', 7] })
    const leader = run(runtime, load, { label: 'leader' })
    const joiner = run(runtime, load, { label: 'joiner' })
    gate.resolve('doc')
    expect(await Promise.all([leader, joiner])).toEqual(['doc', 'doc'])
    const leaderSpan = otel.span('vega.job leader')
    const joinerSpan = otel.span('vega.job joiner')
    expect(joinerSpan.links).toHaveLength(1)
    expect(joinerSpan.links[0]!.context.spanId).toBe(spanId(leaderSpan))
    expect(joinerSpan.links[0]!.attributes).toEqual({ 'vega.job.link': 'reuse' })
    expect(joinerSpan.attributes).toMatchObject({
      'vega.job.result': 'cancellation',
      'vega.job.cancel.reason': 'dedupe',
      'vega.job.cancelled_by': leader.id,
      'vega.job.attempts': 0,
      'vega.job.key': '["doc",7]',
    })
    expect(leaderSpan.links).toHaveLength(0)
    expect(otel.all('vega.job.attempt joiner')).toHaveLength(0)
    expect(otel.all('vega.job.attempt leader')).toHaveLength(1)
  })

  it('links a restart to each task it cancelled (restart)', async () => {
    const { otel, runtime } = traced()
    const search = (q: string) =>
      run(
        runtime,
        withCoordinator(async (ctx) => ctx.sleep(q === 'vega' ? 0 : 60_000), restartCoordinator, {
          key: 'search',
        }),
        { label: q },
      )
    const first = search('v')
    const second = search('ve')
    const third = search('vega')
    await Promise.all([settle(first), settle(second), third])
    const thirdSpan = otel.span('vega.job vega')
    const secondSpan = otel.span('vega.job ve')
    expect(otel.span('vega.job v').attributes['vega.job.cancelled_by']).toBe(second.id)
    expect(secondSpan.attributes['vega.job.cancelled_by']).toBe(third.id)
    expect(secondSpan.links.map((l) => [l.context.spanId, l.attributes])).toEqual([
      [spanId(otel.span('vega.job v')), { 'vega.job.link': 'restart' }],
    ])
    expect(thirdSpan.links.map((l) => [l.context.spanId, l.attributes])).toEqual([
      [spanId(secondSpan), { 'vega.job.link': 'restart' }],
    ])
  })

  it('links a keepLatest survivor to the call it superseded (supersede)', async () => {
    const { otel, runtime } = traced()
    const gate = deferred()
    const save = (label: string) =>
      run(
        runtime,
        withCoordinator(() => gate.promise, keepLatestCoordinator, { key: 'draft' }),
        { label },
      )
    const v1 = save('v1')
    const v2 = save('v2')
    const v3 = save('v3')
    gate.resolve()
    await Promise.all([v1, v2, v3])
    const v2Span = otel.span('vega.job v2')
    expect(v2Span.attributes['vega.job.cancel.reason']).toBe('superseded')
    expect(otel.span('vega.job v3').links.map((l) => [l.context.spanId, l.attributes])).toEqual([
      [spanId(v2Span), { 'vega.job.link': 'supersede' }],
    ])
    expect(otel.span('vega.job v1').links).toHaveLength(0)
  })

  it('links each call a debounce merged to the call it superseded (supersede)', async () => {
    const clock = createTestClock()
    const { otel, runtime } = traced({ clock })
    // One shaper value: its windows are per value and key.
    const typing = debounce(100)
    const typed = (label: string) =>
      run(
        runtime,
        withShaper(async () => label, typing, { key: 'search' }),
        { label },
      )
    const calls = [typed('v'), typed('ve'), typed('vega')]
    const settled = Promise.all(calls.map((call) => settle(call)))
    await clock.advance(100)
    await settled
    // Each call supersedes the one before it: a chain, as with restart.
    const [v, ve, vega] = ['v', 've', 'vega'].map((label) => otel.span(`vega.job ${label}`))
    expect(v!.attributes).toMatchObject({
      'vega.job.cancel.reason': 'superseded',
      'vega.job.cancelled_by': calls[1]!.id,
    })
    expect(ve!.attributes).toMatchObject({
      'vega.job.cancel.reason': 'superseded',
      'vega.job.cancelled_by': calls[2]!.id,
    })
    expect(vega!.attributes['vega.job.result']).toBe('success')
    expect(v!.links).toEqual([])
    expect(ve!.links.map((l) => [l.context.spanId, l.attributes])).toEqual([
      [spanId(v!), { 'vega.job.link': 'supersede' }],
    ])
    expect(vega!.links.map((l) => [l.context.spanId, l.attributes])).toEqual([
      [spanId(ve!), { 'vega.job.link': 'supersede' }],
    ])
  })
})
