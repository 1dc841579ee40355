import { mountDevtools, STATE_STYLES, stateStyle } from '@vega/job-devtools'
import type { Envelope, Lane } from '@vega/job-devtools-protocol'
import { explainStrategy } from '../src/explain.js'
import { formatEvent, formatPromise } from '../src/report.js'
import { type LiveView, runScenario } from '../src/scenario.js'
import { isStrategyName, type StrategySpec, strategyLabel } from '../src/strategies.js'
import { latestTs } from '../src/swimlane.js'
import './style.css'

const CALLS = 4

// The state colours of the devtools panel, as CSS variables: one table for
// the panel's lanes and this page's (--state-running, --state-parked-background…).
for (const style of STATE_STYLES) {
  document.documentElement.style.setProperty(`--state-${style.name}`, style.color)
  document.documentElement.style.setProperty(`--state-${style.name}-background`, style.background)
}

/** `h('td', { class: 'x' }, 'text')`: just enough DOM building for two sections. */
function h<K extends keyof HTMLElementTagNameMap>(
  tag: K,
  attributes: Record<string, string> = {},
  ...children: (Node | string)[]
): HTMLElementTagNameMap[K] {
  const element = document.createElement(tag)
  for (const [name, value] of Object.entries(attributes)) element.setAttribute(name, value)
  element.append(...children)
  return element
}

function byId<T extends HTMLElement>(id: string): T {
  const element = document.getElementById(id)
  if (element === null) throw new Error(`#${id} is missing from index.html`)
  return element as T
}

/** What a section's controls say: the coordinator and the body's duration. */
interface Settings {
  readonly spec: StrategySpec
  readonly duration: number
}

const describeSettings = (settings: Settings) =>
  `${strategyLabel(settings.spec)}, body ${settings.duration} ms`

/** One section's result area: status, counts, the legend, one lane per call, the coordination log. */
class FigureView {
  private live: LiveView | undefined
  private spec: StrategySpec | undefined
  private duration = 0
  private frame = 0
  private finishedIn: number | undefined
  /** Set when the controls no longer say what the result shows: the note above it. */
  private staleNote: string | undefined

  constructor(private readonly root: HTMLElement) {
    this.root.dataset.state = 'idle'
    this.root.replaceChildren(
      h('p', { class: 'status', role: 'status', 'aria-live': 'polite' }, 'Ready: press Fire.'),
    )
  }

  /**
   * The controls changed: a result of other settings is marked stale (dimmed,
   * with a note saying what it was run with), and unmarked when the controls
   * come back to what it shows.
   */
  compare(current: Settings): void {
    const spec = this.spec
    if (spec === undefined || this.root.dataset.state !== 'done') return
    const shown = { spec, duration: this.duration }
    const stale = describeSettings(shown) !== describeSettings(current)
    this.staleNote = stale
      ? `Stale: this result is for ${describeSettings(shown)}; the controls now say ${describeSettings(current)}. Press Fire to run it.`
      : undefined
    if (stale) this.root.dataset.stale = 'true'
    else delete this.root.dataset.stale
    this.schedule()
  }

  start(spec: StrategySpec, duration: number): void {
    this.staleNote = undefined
    delete this.root.dataset.stale
    this.spec = spec
    this.duration = duration
    this.live = undefined
    this.finishedIn = undefined
    this.root.dataset.state = 'running'
    this.schedule()
  }

  update(live: LiveView): void {
    this.live = live
    this.schedule()
  }

  finish(elapsedMs: number): void {
    this.finishedIn = elapsedMs
    this.root.dataset.state = 'done'
    this.schedule()
  }

  fail(error: unknown): void {
    this.root.dataset.state = 'error'
    this.root.replaceChildren(
      h('p', { class: 'status error', role: 'alert' }, `The lab failed: ${String(error)}`),
    )
  }

  // Open segments grow with the clock, so keep drawing every frame until done.
  private schedule(): void {
    if (this.frame !== 0) return
    this.frame = requestAnimationFrame(() => {
      this.frame = 0
      this.render()
      if (this.root.dataset.state === 'running') this.schedule()
    })
  }

  private render(): void {
    const spec = this.spec
    if (spec === undefined) return
    const live = this.live
    const label = strategyLabel(spec)
    const done = this.finishedIn !== undefined
    const lanes = live?.lanes ?? []
    // Executions as devtools see them: a lane that reached `running` is a body that ran.
    const executions = lanes.filter((lane) =>
      lane.segments.some((segment) => segment.state === 'running'),
    ).length
    const status = done
      ? `Done: ${label}, ${CALLS} calls, body ${this.duration} ms, finished in ${this.finishedIn} ms.`
      : `Running ${label}…`

    const startTs = lanes[0]?.segments[0]?.fromTs ?? Date.now()
    const endTs = done ? latestTs(lanes, startTs) : Date.now()
    const span = Math.max(endTs - startTs, this.duration, 1)

    this.root.replaceChildren(
      ...(this.staleNote === undefined
        ? []
        : [
            h('p', { class: 'stale-note', role: 'status', 'data-testid': 'stale' }, this.staleNote),
          ]),
      h('p', { class: 'status', role: 'status', 'aria-live': 'polite' }, status),
      h(
        'dl',
        { class: 'stats' },
        h('div', {}, h('dt', {}, 'Coordinator'), h('dd', { 'data-testid': 'coordinator' }, label)),
        h(
          'div',
          {},
          h('dt', {}, 'Body executions'),
          h('dd', { 'data-testid': 'executions' }, String(executions)),
        ),
        h(
          'div',
          {},
          h('dt', {}, 'Body duration'),
          h('dd', { 'data-testid': 'duration' }, `${this.duration} ms`),
        ),
      ),
      legend(),
      this.lanesTable(lanes, live, startTs, span),
      this.logTable(live?.envelopes ?? []),
    )
  }

  private lanesTable(
    lanes: readonly Lane[],
    live: LiveView | undefined,
    startTs: number,
    span: number,
  ): HTMLTableElement {
    const percent = (ms: number) => `${((ms / span) * 100).toFixed(2)}%`
    const now = Date.now()
    const rows = lanes.map((lane, index) => {
      const call = index + 1
      const track = h('div', { class: 'track', role: 'img' })
      const words: string[] = []
      for (const segment of lane.segments) {
        const to = segment.toTs ?? lane.end?.ts ?? now
        words.push(`${segment.state} ${segment.fromTs - startTs}–${to - startTs} ms`)
        if (segment.state === 'idle') continue
        track.append(
          h('span', {
            class: `segment state-${segment.state.replace(':', '-')}`,
            style: `left:${percent(segment.fromTs - startTs)};width:${percent(to - segment.fromTs)};background:${stateStyle(segment.state).background}`,
            title: `${segment.state}: ${to - segment.fromTs} ms`,
          }),
        )
      }
      if (lane.end !== undefined) {
        words.push(`${lane.end.state} at ${lane.end.ts - startTs} ms`)
        track.append(
          h('span', {
            class: `end end-${lane.end.state}`,
            style: `left:${percent(lane.end.ts - startTs)};background:${stateStyle(lane.end.state).color}`,
            title: lane.end.state,
          }),
        )
      }
      track.setAttribute('aria-label', words.join(', '))
      const promise = live?.promises[index]
      const marks = lane.marks.map((mark) => mark.text).join(' · ')
      return h(
        'tr',
        { 'data-call': String(call), 'data-task-id': String(lane.taskId) },
        h('th', { scope: 'row' }, `#${call}`),
        h('td', { class: 'timeline' }, track, h('div', { class: 'marks' }, marks)),
        h(
          'td',
          { 'data-field': 'state', class: `state state-${lane.state.replace(':', '-')}` },
          lane.state,
        ),
        h('td', { 'data-field': 'reason' }, lane.end?.reason ?? ''),
        h(
          'td',
          { 'data-field': 'cancelled-by' },
          lane.end?.cancelledBy === undefined ? '' : `#${lane.end.cancelledBy}`,
        ),
        h('td', { 'data-field': 'promise' }, promise === undefined ? '…' : formatPromise(promise)),
      )
    })
    return h(
      'table',
      { class: 'lanes' },
      h('caption', {}, 'One lane per call, from the devtools reducer'),
      h(
        'thead',
        {},
        h(
          'tr',
          {},
          h('th', { scope: 'col' }, 'Call'),
          h('th', { scope: 'col', class: 'timeline' }, `Timeline (0–${Math.round(span)} ms)`),
          h('th', { scope: 'col' }, 'Task state'),
          h('th', { scope: 'col' }, 'cancelReason'),
          h('th', { scope: 'col' }, 'Cancelled by'),
          h('th', { scope: 'col' }, 'Promise'),
        ),
      ),
      h('tbody', {}, ...rows),
    )
  }

  private logTable(envelopes: readonly Envelope[]): HTMLElement {
    const events = envelopes.filter((envelope) => envelope.e.type.startsWith('coordination:'))
    if (events.length === 0) {
      return h('p', { class: 'log-empty', 'data-testid': 'log-empty' }, 'No coordination:* events.')
    }
    return h(
      'table',
      { class: 'log', 'data-testid': 'log' },
      h('caption', {}, 'coordination:* events'),
      h(
        'thead',
        {},
        h(
          'tr',
          {},
          h('th', { scope: 'col' }, 'seq'),
          h('th', { scope: 'col' }, 'Type'),
          h('th', { scope: 'col' }, 'Coordinator'),
          h('th', { scope: 'col' }, 'What'),
        ),
      ),
      h(
        'tbody',
        {},
        ...events.map((envelope) => {
          const event = envelope.e as unknown as Parameters<typeof formatEvent>[0]
          return h(
            'tr',
            {
              'data-type': event.type,
              'data-coordinator': String(event.coordinator),
              'data-intent': String(event.intentId),
            },
            h('td', {}, String(envelope.seq)),
            h('td', {}, h('code', {}, event.type)),
            h('td', { 'data-field': 'coordinator' }, String(event.coordinator)),
            h('td', {}, formatEvent(event)),
          )
        }),
      ),
    )
  }
}

/** The legend, from the devtools palette: the panel shows the same colours. */
function legend(): HTMLElement {
  const item = (state: string, text: string, end: boolean) =>
    h(
      'li',
      { 'data-legend-state': state },
      h('span', {
        class: end ? 'swatch swatch-end' : 'swatch',
        'aria-hidden': 'true',
        style: `background:${end ? stateStyle(state).color : stateStyle(state).background}`,
      }),
      text,
    )
  return h(
    'ul',
    { class: 'legend', 'aria-label': 'Legend' },
    item('running', 'running', false),
    item('parked', 'parked (hatched): waiting on the coordinator', false),
    item('queued', 'queued: waiting for the runtime to start it', false),
    item('success', 'ended: success', true),
    item('cancelled', 'ended: cancelled', true),
    item('error', 'ended: error', true),
  )
}

// The devtools panel (Ctrl+Shift+F, or the button): every fire is one more
// session in it. The scenarios already read the runtime through the wire
// protocol; their envelopes go on to the panel through a MessageChannel.
const devtoolsChannel = new MessageChannel()
const devtools = mountDevtools({ source: devtoolsChannel.port2, position: 'bottom' })
const forwarded = new Map<string, number>()
function forwardToDevtools(sessionId: string, envelopes: readonly Envelope[]): void {
  const sent = forwarded.get(sessionId) ?? 0
  if (envelopes.length <= sent) return
  devtoolsChannel.port1.postMessage(envelopes.slice(sent))
  forwarded.set(sessionId, envelopes.length)
}
byId<HTMLButtonElement>('toggle-devtools').addEventListener('click', () => {
  if (devtools.isOpen) devtools.close()
  else devtools.open()
})

// While a run is going, every control is disabled: the controls can never
// say something else than the run on screen. (The duration is shared by both
// sections, so one run holds both.)
let running = 0
function setBusy(change: 1 | -1): void {
  running += change
  const busy = running > 0
  for (const control of document.querySelectorAll<HTMLInputElement | HTMLButtonElement>(
    '.controls input, .controls button',
  )) {
    control.disabled = busy
  }
  if (!busy) limitInput.disabled = customSettings().spec.name !== 'bounded'
}

async function fire(view: FigureView, settings: Settings): Promise<void> {
  const { spec, duration } = settings
  setBusy(1)
  view.start(spec, duration)
  try {
    const result = await runScenario({
      strategy: spec,
      calls: CALLS,
      duration,
      onUpdate: (live) => {
        view.update(live)
        forwardToDevtools(live.sessionId, live.envelopes)
      },
    })
    view.finish(result.elapsedMs)
  } catch (error) {
    view.fail(error)
  } finally {
    setBusy(-1)
  }
}

const durationInput = byId<HTMLInputElement>('duration')
const durationValue = byId<HTMLOutputElement>('duration-value')
const duration = () => Number(durationInput.value)

const builtInView = new FigureView(byId('result-built-ins'))
const builtInForm = byId<HTMLFormElement>('controls-built-ins')
const builtInExplain = byId<HTMLParagraphElement>('explain-built-ins')
const customView = new FigureView(byId('result-custom'))
const customForm = byId<HTMLFormElement>('controls-custom')
const customExplain = byId<HTMLParagraphElement>('explain-custom')
const limitInput = byId<HTMLInputElement>('limit')

/** The radio checked in a form (read from the inputs: a disabled form gives FormData nothing). */
const checked = (form: HTMLFormElement) =>
  form.querySelector<HTMLInputElement>('input[type="radio"]:checked')?.value ?? ''
const readLimit = () => Math.max(1, Math.min(4, Math.round(Number(limitInput.value)) || 1))
function builtInSettings(): Settings {
  const name = checked(builtInForm)
  return { spec: { name: isStrategyName(name) ? name : 'none' }, duration: duration() }
}
function customSettings(): Settings {
  const spec: StrategySpec =
    checked(customForm) === 'forgetful'
      ? { name: 'forgetful' }
      : { name: 'bounded', limit: readLimit() }
  return { spec, duration: duration() }
}

// Every control change: the explanations follow the controls, and a result
// the controls no longer describe says so.
function controlsChanged(): void {
  durationValue.value = `${duration()} ms`
  const builtIn = builtInSettings()
  if (builtIn.spec.name !== 'bounded' && builtIn.spec.name !== 'forgetful') {
    builtInExplain.textContent = explainStrategy(builtIn.spec.name)
  }
  const custom = customSettings()
  limitInput.disabled = running > 0 || custom.spec.name !== 'bounded'
  customExplain.textContent = explainStrategy(custom.spec.name, readLimit())
  builtInView.compare(builtIn)
  customView.compare(custom)
}
for (const form of [builtInForm, customForm]) {
  form.addEventListener('change', controlsChanged)
  form.addEventListener('input', controlsChanged)
}
controlsChanged()

builtInForm.addEventListener('submit', (event) => {
  event.preventDefault()
  void fire(builtInView, builtInSettings())
})
customForm.addEventListener('submit', (event) => {
  event.preventDefault()
  limitInput.value = String(readLimit())
  void fire(customView, customSettings())
})
