import { mountDevtools } from '@vega/job-devtools'
import type { Envelope, Lane } from '@vega/job-devtools-protocol'
import { explainStrategy } from '../src/explain.js'
import { formatEvent, formatPromise } from '../src/report.js'
import { type LiveView, runScenario } from '../src/scenario.js'
import { isStrategyName, type StrategySpec, strategyLabel } from '../src/strategies.js'
import { latestTs } from '../src/swimlane.js'
import './style.css'

const CALLS = 4

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

/** One section's result area: status, counts, the legend, one lane per call, the coordination log. */
class FigureView {
  private live: LiveView | undefined
  private spec: StrategySpec | undefined
  private duration = 0
  private frame = 0
  private finishedIn: number | undefined

  constructor(private readonly root: HTMLElement) {
    this.root.dataset.state = 'idle'
    this.root.replaceChildren(
      h('p', { class: 'status', role: 'status', 'aria-live': 'polite' }, 'Ready: press Fire.'),
    )
  }

  start(spec: StrategySpec, duration: number): void {
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
            style: `left:${percent(segment.fromTs - startTs)};width:${percent(to - segment.fromTs)}`,
            title: `${segment.state}: ${to - segment.fromTs} ms`,
          }),
        )
      }
      if (lane.end !== undefined) {
        words.push(`${lane.end.state} at ${lane.end.ts - startTs} ms`)
        track.append(
          h('span', {
            class: `end end-${lane.end.state}`,
            style: `left:${percent(lane.end.ts - startTs)}`,
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

function legend(): HTMLElement {
  const item = (swatch: string, text: string) =>
    h('li', {}, h('span', { class: `swatch ${swatch}`, 'aria-hidden': 'true' }), text)
  return h(
    'ul',
    { class: 'legend', 'aria-label': 'Legend' },
    item('state-running', 'running'),
    item('state-parked-coordinator', 'parked'),
    item('state-queued', 'queued'),
    item('end-success', 'ended: success'),
    item('end-cancelled', 'ended: cancelled'),
    item('end-error', 'ended: error'),
  )
}

// The devtools panel (Ctrl+Shift+J, or the button): every fire is one more
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

async function fire(
  view: FigureView,
  button: HTMLButtonElement,
  spec: StrategySpec,
  duration: number,
): Promise<void> {
  button.disabled = true
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
    button.disabled = false
  }
}

const durationInput = byId<HTMLInputElement>('duration')
const durationValue = byId<HTMLOutputElement>('duration-value')
const duration = () => Number(durationInput.value)
durationInput.addEventListener('input', () => {
  durationValue.value = `${duration()} ms`
})

const builtInView = new FigureView(byId('result-built-ins'))
const builtInForm = byId<HTMLFormElement>('controls-built-ins')
const builtInFire = byId<HTMLButtonElement>('fire-built-ins')
const builtInExplain = byId<HTMLParagraphElement>('explain-built-ins')
// What the chosen coordinator is for, shown before firing and kept while it runs.
const explainBuiltIn = () => {
  const name = String(new FormData(builtInForm).get('strategy'))
  if (isStrategyName(name)) builtInExplain.textContent = explainStrategy(name)
}
builtInForm.addEventListener('change', explainBuiltIn)
explainBuiltIn()
builtInForm.addEventListener('submit', (event) => {
  event.preventDefault()
  const name = String(new FormData(builtInForm).get('strategy'))
  if (!isStrategyName(name)) return
  void fire(builtInView, builtInFire, { name }, duration())
})

const customView = new FigureView(byId('result-custom'))
const customForm = byId<HTMLFormElement>('controls-custom')
const customFire = byId<HTMLButtonElement>('fire-custom')
const customExplain = byId<HTMLParagraphElement>('explain-custom')
const limitInput = byId<HTMLInputElement>('limit')
const readLimit = () => Math.max(1, Math.min(4, Math.round(Number(limitInput.value)) || 1))
const syncCustom = () => {
  const name = new FormData(customForm).get('custom') === 'forgetful' ? 'forgetful' : 'bounded'
  limitInput.disabled = name !== 'bounded'
  customExplain.textContent = explainStrategy(name, readLimit())
}
customForm.addEventListener('change', syncCustom)
limitInput.addEventListener('input', syncCustom)
syncCustom()
customForm.addEventListener('submit', (event) => {
  event.preventDefault()
  const name = String(new FormData(customForm).get('custom'))
  if (name !== 'bounded' && name !== 'forgetful') return
  const limit = readLimit()
  limitInput.value = String(limit)
  void fire(customView, customFire, name === 'bounded' ? { name, limit } : { name }, duration())
})
