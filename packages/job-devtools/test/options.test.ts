import { createRuntime } from '@vega/job-core'
import { describe, expect, it } from 'vitest'
import { parseHotkey } from '../src/internal/hotkey.js'
import { DEFAULT_RETENTION, resolveOptions } from '../src/internal/validate.js'
import { mountDevtools as productionMount } from '../src/production.js'

// A container is anything with appendChild; the browser tests mount into real ones.
const container = { appendChild: () => undefined } as unknown as Element

describe('mountDevtools options: bad input fails early, naming the option and the value', () => {
  it('a source that is none of the accepted kinds', () => {
    expect(() => resolveOptions({ container, source: { port: 4318 } })).toThrow(
      /options\.source must be a runtime from createRuntime\(\), a port .*got an object with keys port/,
    )
    expect(() => resolveOptions({ container, source: 'ws://127.0.0.1:4318' })).toThrow(
      /options\.source .*got "ws:\/\/127\.0\.0\.1:4318"/,
    )
    expect(() => resolveOptions({ container, source: { url: 'http://127.0.0.1:4318' } })).toThrow(
      /options\.source/,
    )
    expect(() => resolveOptions({ container, source: { broadcast: '' } })).toThrow(
      /options\.source/,
    )
  })

  it('accepts a runtime, a port, a broadcast channel name and a relay url', () => {
    const runtime = createRuntime({ name: 'options-test' })
    const { port1 } = new MessageChannel()
    for (const source of [
      runtime,
      port1,
      { broadcast: 'vega-job' },
      { url: 'ws://127.0.0.1:4318' },
    ]) {
      expect(resolveOptions({ container, source }).source).toBe(source)
    }
    port1.close()
  })

  it('a retention that is not a positive integer', () => {
    for (const tasks of [0, -1, 1.5, Number.NaN, '100', Number.POSITIVE_INFINITY]) {
      expect(() => resolveOptions({ container, retention: { tasks } })).toThrow(
        new RegExp(
          `options\\.retention\\.tasks must be a positive integer, got ${tasks === '100' ? '"100"' : String(tasks)}`,
        ),
      )
    }
    expect(() => resolveOptions({ container, retention: { events: 0 } })).toThrow(
      /options\.retention\.events must be a positive integer, got 0/,
    )
    expect(() => resolveOptions({ container, retention: { task: 10 } })).toThrow(
      /unknown option "retention\.task"/,
    )
    expect(resolveOptions({ container, retention: { tasks: 10 } }).retention).toEqual({
      tasks: 10,
      events: DEFAULT_RETENTION.events,
    })
  })

  it('unknown keys, bad position, record, hotkey and open', () => {
    expect(() => resolveOptions({ container, opened: true })).toThrow(/unknown option "opened"/)
    expect(() => resolveOptions({ container, position: 'middle' })).toThrow(
      /options\.position must be one of bottom, top, left, right, fill, got "middle"/,
    )
    expect(() => resolveOptions({ container, record: 'never' })).toThrow(
      /options\.record must be 'always' or 'while-open', got "never"/,
    )
    expect(() => resolveOptions({ container, hotkey: 'Ctrl+Shift' })).toThrow(/options\.hotkey/)
    expect(() => resolveOptions({ container, open: 'yes' })).toThrow(
      /options\.open must be a boolean/,
    )
    expect(() => resolveOptions({ container: {} })).toThrow(
      /options\.container must be a DOM element/,
    )
    expect(() => resolveOptions(null)).toThrow(/options must be an object, got null/)
  })

  it('defaults', () => {
    expect(resolveOptions({ container })).toMatchObject({
      open: false,
      hotkey: 'Ctrl+Shift+F',
      position: 'bottom',
      record: 'always',
      retention: { tasks: 5_000, events: 50_000 },
    })
  })
})

describe('hotkeys', () => {
  it('parses modifiers and one key', () => {
    expect(parseHotkey('Ctrl+Shift+J')).toEqual({
      ctrl: true,
      shift: true,
      alt: false,
      meta: false,
      key: 'j',
    })
    expect(parseHotkey('alt + F12')).toEqual({
      ctrl: false,
      shift: false,
      alt: true,
      meta: false,
      key: 'f12',
    })
    expect(parseHotkey('Ctrl+J+K')).toBeUndefined()
  })
})

describe('@vega/job-devtools/production', () => {
  it('has the same shape and does nothing', async () => {
    const panel = productionMount({ open: true })
    panel.open()
    expect(panel.isOpen).toBe(false)
    expect(panel.load('not json')).toEqual({ sessions: [], envelopes: 0, errors: [] })
    await expect(panel.ready()).resolves.toBeUndefined()
    panel.destroy()
  })
})
