import { type Envelope, parseNdjsonLine } from '@vega/job-devtools-protocol'
import { DEVTOOLS_TAG_NAME, defineDevtoolsElement } from './element.js'
import { type Hotkey, matchesHotkey, parseHotkey } from './internal/hotkey.js'
import { PanelModel } from './internal/model.js'
import { type ConnectionState, type SourceConnection, startSource } from './internal/sources.js'
import { resolveOptions } from './internal/validate.js'
import type { PanelHost, PanelView } from './internal/view-contract.js'
import type { DevtoolsOptions, DevtoolsPanel, LoadError, LoadResult } from './options.js'

const mounted = new WeakMap<object, DevtoolsPanel>()
// Envelopes are reduced in a task of their own soon after they arrive, for at
// most this long, in slices; the rest of a backlog waits for the next task,
// so the page paints and handles input in between: a burst never makes one
// long task. (Not in an animation frame: a frame requested only to reduce
// still costs the browser a paint and a commit.)
const REDUCE_BUDGET_MS = 8
const REDUCE_SLICE = 1024
// New events are drawn at most this often: a stream of thousands of events a
// second is drawn 10 times a second (each drawing lays out every visible row
// anew). What the user does (a filter, a scroll, a click, a drag) is drawn in
// the next frame.
const DATA_REFRESH_MS = 100
// And no more often than keeps drawing under a tenth of the main thread: a
// drawing that took 30 ms (a slow machine, a busy one) waits 300 ms for the next.
const DRAW_SHARE = 0.1

// Only what the host element needs before the UI is loaded: hidden while
// closed, and shielded from the page. `!important` inside the shadow tree
// beats the page's `!important` (the inner context wins for important
// declarations), so `* { all: unset !important }` in the page changes nothing.
const HOST_CSS = `
:host { all: initial !important; display: none !important; }
:host([open]) { display: block !important; position: fixed !important; z-index: 2147483000 !important; box-sizing: border-box !important; }
:host([open][data-position='bottom']) { left: 0 !important; right: 0 !important; bottom: 0 !important; height: 45vh !important; }
:host([open][data-position='top']) { left: 0 !important; right: 0 !important; top: 0 !important; height: 45vh !important; }
:host([open][data-position='left']) { left: 0 !important; top: 0 !important; bottom: 0 !important; width: 45vw !important; }
:host([open][data-position='right']) { right: 0 !important; top: 0 !important; bottom: 0 !important; width: 45vw !important; }
:host([open][data-position='fill']) { position: absolute !important; inset: 0 !important; }
`

/**
 * Mounts the devtools panel: a `<vega-job-devtools>` element with an open
 * shadow root in `container`. With the default `record: 'always'` it listens
 * at once and keeps recording while closed; the UI code itself is loaded
 * with `import()` on the first open. Envelopes are reduced in batches, at
 * most 8 ms at a time; new data is drawn at most 10 times a second (user
 * actions in the next frame), and nothing is drawn while closed.
 *
 * Throws a `TypeError`/`RangeError` naming the option for bad options, and an
 * `Error` when `container` already holds a panel (destroy it first — in React,
 * in the effect's cleanup).
 *
 * @example
 * ```ts fragment
 * import { createRuntime } from '@vega/job-core'
 * import { mountDevtools } from '@vega/job-devtools'
 *
 * const runtime = createRuntime({ name: 'app' })
 * const panel = mountDevtools({ source: runtime, hotkey: 'Ctrl+Shift+F' })
 * panel.open()
 * // later
 * panel.destroy()
 * ```
 */
export function mountDevtools(options: DevtoolsOptions = {}): DevtoolsPanel {
  const resolved = resolveOptions(options)
  const { container, retention, source, record } = resolved
  if (mounted.has(container)) {
    throw new Error(
      'mountDevtools: this container already holds a devtools panel; call destroy() on the first one before mounting again (in React, from the effect cleanup).',
    )
  }
  defineDevtoolsElement()
  const documentOf = container.ownerDocument ?? document
  const element = documentOf.createElement(DEVTOOLS_TAG_NAME)
  element.dataset.position = resolved.position
  const shadow = element.shadowRoot as ShadowRoot
  const hostStyle = documentOf.createElement('style')
  hostStyle.textContent = HOST_CSS
  shadow.append(hostStyle)
  container.appendChild(element)

  const sessionId = `panel-${Math.random().toString(36).slice(2, 10)}-${Date.now().toString(36)}`
  let connection: SourceConnection | undefined
  let connectionState: ConnectionState = 'none'
  let isOpen = false
  let destroyed = false
  let view: PanelView | undefined
  let viewLoading: Promise<void> | undefined
  let frame: number | undefined
  let refresh: ReturnType<typeof setTimeout> | undefined
  let reducing: ReturnType<typeof setTimeout> | undefined
  let lastDraw = Number.NEGATIVE_INFINITY
  let refreshMs = DATA_REFRESH_MS
  let lastLoad: LoadResult | undefined
  let preferredSession: string | undefined
  const paintWaiters: Array<() => void> = []

  const model = new PanelModel(retention, () => connection?.requestSnapshot())

  // Reduces what is pending within the budget; what is left goes on in the
  // next task, in order.
  const reduceWithinBudget = (): void => {
    const deadline = performance.now() + REDUCE_BUDGET_MS
    do model.flush(REDUCE_SLICE)
    while (model.pendingCount > 0 && performance.now() < deadline)
    if (model.pendingCount > 0) reduceSoon()
  }
  // A reduce task: then new data is drawn (while open) at the refresh rate.
  const reduce = (): void => {
    reduceWithinBudget()
    drawSoon()
  }
  const reduceSoon = (): void => {
    if (reducing !== undefined || destroyed) return
    reducing = setTimeout(() => {
      reducing = undefined
      reduce()
    }, 0)
  }
  // Draws in an animation frame: what the user changed at once, new data at
  // most every `refreshMs`. `ready()` resolves once nothing is pending and
  // all of it is drawn.
  const draw = (): void => {
    if (!isOpen || view === undefined) return
    const now = performance.now()
    const dataDue = paintWaiters.length > 0 || now - lastDraw >= refreshMs
    if (view.render(dataDue)) {
      lastDraw = now
      refreshMs = Math.max(DATA_REFRESH_MS, (performance.now() - now) / DRAW_SHARE)
    }
    if (!view.isCurrent()) drawSoon()
    else if (model.pendingCount === 0) for (const done of paintWaiters.splice(0)) done()
  }
  const onFrame = (): void => {
    frame = undefined
    draw()
  }
  const schedule = (): void => {
    if (frame !== undefined || destroyed) return
    frame = requestAnimationFrame(onFrame)
  }
  const drawSoon = (): void => {
    if (!isOpen || frame !== undefined || refresh !== undefined || destroyed) return
    if (view === undefined || view.isCurrent()) return
    const wait = paintWaiters.length > 0 ? 0 : lastDraw + refreshMs - performance.now()
    if (wait <= 0) {
      schedule()
      return
    }
    refresh = setTimeout(() => {
      refresh = undefined
      schedule()
    }, wait)
  }
  // Opening, or the UI chunk just loaded: what is pending is reduced and the
  // rows go into the DOM now, not a frame later, so the next paint shows them.
  const update = (): void => {
    reduceWithinBudget()
    lastDraw = Number.NEGATIVE_INFINITY
    draw()
  }
  const onBatch = (batch: readonly Envelope[]): void => {
    model.enqueue(batch)
    // A hidden tab runs timers rarely: past the log's size, reduce now
    // instead of holding an unbounded queue.
    if (model.pendingCount > retention.events) model.flush()
    reduceSoon()
  }
  const connect = (): void => {
    if (source === undefined || connection !== undefined) return
    connection = startSource(source, sessionId, retention.events, {
      onBatch,
      onState: (state) => {
        connectionState = state
        schedule()
      },
    })
  }
  const disconnect = (): void => {
    connection?.stop()
    connection = undefined
  }

  const host: PanelHost = {
    model,
    shadow,
    position: resolved.position,
    connectionState: () => connectionState,
    lastLoad: () => lastLoad,
    takePreferredSession: () => {
      const key = preferredSession
      preferredSession = undefined
      return key
    },
    load: (text) => panel.load(text),
    requestSnapshot: () => connection?.requestSnapshot(),
    invalidate: schedule,
    close: () => panel.close(),
    hotkey: resolved.hotkey,
    relayUrl:
      typeof source === 'object' && source !== null && 'url' in source
        ? String((source as { url: unknown }).url)
        : undefined,
  }

  const loadView = (): Promise<void> => {
    viewLoading ??= import('./ui/view.js').then(({ createView }) => {
      if (destroyed) return
      view = createView(host)
      // The first rows go into the DOM now, not a frame later: this frame paints them.
      update()
    })
    return viewLoading
  }

  const hotkey: Hotkey | undefined =
    resolved.hotkey === false ? undefined : parseHotkey(resolved.hotkey)
  const onKeyDown = (event: KeyboardEvent): void => {
    if (hotkey === undefined || !matchesHotkey(hotkey, event)) return
    event.preventDefault()
    if (isOpen) panel.close()
    else panel.open()
  }
  if (hotkey !== undefined) documentOf.addEventListener('keydown', onKeyDown)

  const panel: DevtoolsPanel = {
    open() {
      if (destroyed || isOpen) return
      isOpen = true
      element.setAttribute('open', '')
      connect()
      // Opened again: what happened while closed is drawn before the next paint.
      if (view !== undefined) update()
      else void loadView()
    },
    close() {
      if (destroyed || !isOpen) return
      isOpen = false
      element.removeAttribute('open')
      if (record === 'while-open') disconnect()
    },
    get isOpen() {
      return isOpen
    },
    load(text) {
      if (typeof text !== 'string') {
        throw new TypeError(
          `panel.load(ndjson): ndjson must be the text of a recording (a string), got ${text === null ? 'null' : typeof text}.`,
        )
      }
      const envelopes: Envelope[] = []
      const errors: LoadError[] = []
      const lines = text.split('\n')
      for (let index = 0; index < lines.length; index += 1) {
        try {
          const envelope = parseNdjsonLine(lines[index] as string, index + 1)
          if (envelope !== undefined) envelopes.push(envelope)
        } catch (error) {
          errors.push({ line: index + 1, message: (error as Error).message })
        }
      }
      const sessions = model.enqueueRecording(envelopes)
      model.flush()
      lastLoad = { sessions, envelopes: envelopes.length, errors }
      preferredSession = sessions[0]
      // A load is the user's doing: drawn in the next frame, not at the data rate.
      lastDraw = Number.NEGATIVE_INFINITY
      schedule()
      return lastLoad
    },
    destroy() {
      if (destroyed) return
      destroyed = true
      isOpen = false
      if (frame !== undefined) cancelAnimationFrame(frame)
      if (refresh !== undefined) clearTimeout(refresh)
      if (reducing !== undefined) clearTimeout(reducing)
      documentOf.removeEventListener('keydown', onKeyDown)
      disconnect()
      view?.destroy()
      element.remove()
      for (const done of paintWaiters.splice(0)) done()
      mounted.delete(container)
    },
    ready() {
      if (destroyed || !isOpen) return Promise.resolve()
      return loadView().then(
        () =>
          new Promise<void>((done) => {
            paintWaiters.push(done)
            schedule()
          }),
      )
    },
  }
  mounted.set(container, panel)
  if (record === 'always') connect()
  if (resolved.open) panel.open()
  return panel
}
