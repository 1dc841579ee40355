import type { TaskTimeline } from '@vega/job-devtools-protocol'
import { formatNdjson } from '@vega/job-devtools-protocol'
import {
  type Grouping,
  type PanelSession,
  type RowFilter,
  TERMINAL_STATES,
} from '../internal/model.js'
import type { PanelHost, PanelView } from '../internal/view-contract.js'
import { STATE_STYLES } from '../palette.js'
import { DetailsView } from './details.js'
import { el, setData, setText } from './dom.js'
import { type LanesFrame, LanesView, MARK_COLORS, type ProcessTag, type TaskRef } from './lanes.js'
import { LogView } from './log.js'
import { PANEL_CSS } from './styles.js'

const LIVE_STATES = ['queued', 'parked', 'running']
/** The picker's value for every session side by side (no session key starts with a control character). */
const SIDE_BY_SIDE = '\u0001side-by-side'
/** One colour per process side by side, in the order the sessions came: none is a state's colour. */
const PROCESS_COLORS = ['#6ad1ff', '#ff8fd8', '#ffe27a', '#7ee2a8', '#c0c6d4', '#ffa07a']
const STATE_FILTERS = ['', 'idle', 'queued', 'parked', 'running', 'success', 'error', 'cancelled']
const SETTLED_AGE: ReadonlyArray<[string, string]> = [
  ['', 'show all settled'],
  ['1000', 'hide settled > 1 s'],
  ['10000', 'hide settled > 10 s'],
  ['60000', 'hide settled > 60 s'],
]

/**
 * Builds the panel inside the host's shadow root. Loaded with `import()` on
 * the first open; `render()` runs at most once per animation frame, only
 * while the panel is open, and skips what did not change.
 *
 * @example
 * ```ts fragment
 * const view = createView(host)
 * view.render()
 * ```
 */
export function createView(host: PanelHost): PanelView {
  const { model } = host
  let selectedSession: string | undefined
  /**
   * Whether the user picked an older session: until then, and again once
   * they pick the newest, the panel follows the newest session.
   */
  let sessionPicked = false
  let selectedTask: TaskRef | undefined
  /** The session the log and the details show: the selected task's, else the newest shown. */
  let focusKey: string | undefined
  let paused = false
  let filter: RowFilter = {}
  let grouping: Grouping = 'none'
  let drawnRevision = -1
  let uiDirty = true
  /** The log still shows the data before the last drawing: it is drawn in the next frame. */
  let logBehind = false
  const touch = (): void => {
    uiDirty = true
    host.invalidate()
  }

  /** The sessions the lanes show: the one picked, or every one side by side. */
  const shownSessions = (): PanelSession[] => {
    if (selectedSession === SIDE_BY_SIDE) return [...model.sessions.values()]
    const session = selectedSession === undefined ? undefined : model.sessions.get(selectedSession)
    return session === undefined ? [] : [session]
  }

  /** The rows of the shown sessions, and whose each row is; side by side, in order of start. */
  const lanesOf = (sessions: readonly PanelSession[]) => {
    const only = sessions[0]
    if (sessions.length === 1 && only !== undefined) {
      return { rows: model.rows(only.key, filter, grouping), sessionOf: () => only }
    }
    const owner = new Map<TaskTimeline, PanelSession>()
    const rows: TaskTimeline[] = []
    for (const session of sessions) {
      for (const row of model.rows(session.key, filter, grouping)) {
        owner.set(row, session)
        rows.push(row)
      }
    }
    const group = (task: TaskTimeline) =>
      grouping === 'key' ? (task.key ?? '') : grouping === 'label' ? (task.label ?? '') : ''
    const start = (task: TaskTimeline) => task.entries[0]?.ts ?? task.since
    rows.sort((a, b) => group(a).localeCompare(group(b)) || start(a) - start(b))
    return { rows, sessionOf: (task: TaskTimeline) => owner.get(task) ?? (only as PanelSession) }
  }

  const select = (task: TaskRef): void => {
    selectedTask = task
    focusKey = task.session
    const { rows, sessionOf } = lanesOf(shownSessions())
    const index = rows.findIndex((row) => row.id === task.id && sessionOf(row).key === task.session)
    if (index >= 0) lanesView.reveal(index)
    touch()
  }
  // The log and the details show one session: a task they name is of that session.
  const selectInFocus = (id: number): void => {
    if (focusKey !== undefined) select({ session: focusKey, id })
  }

  const lanesView = new LanesView(select, touch)
  const logView = new LogView(selectInFocus, touch)
  const detailsView = new DetailsView(selectInFocus)

  const sessionPicker = el('select', { dataset: { session: '' }, attrs: { title: 'session' } })
  sessionPicker.addEventListener('change', () => {
    selectedSession = sessionPicker.value
    sessionPicked = selectedSession !== [...model.sessions.keys()].at(-1)
    selectedTask = undefined
    focusKey = undefined
    touch()
  })
  const connection = el('span', { className: 'conn', dataset: { connection: 'none' } })
  const pause = el('button', { text: 'pause', dataset: { action: 'pause' } })
  pause.addEventListener('click', () => {
    paused = !paused
    pause.textContent = paused ? 'resume' : 'pause'
    touch()
  })
  const clear = el('button', { text: 'clear', dataset: { action: 'clear' } })
  clear.addEventListener('click', () => {
    model.clear()
    selectedSession = undefined
    sessionPicked = false
    selectedTask = undefined
    focusKey = undefined
    touch()
  })
  const exportButton = el('button', { text: 'export NDJSON', dataset: { action: 'export' } })
  exportButton.addEventListener('click', () => {
    const session = focusKey === undefined ? undefined : model.sessions.get(focusKey)
    if (session === undefined) return
    const url = URL.createObjectURL(
      new Blob([formatNdjson(session.log.toArray())], { type: 'application/x-ndjson' }),
    )
    const link = el('a', { attrs: { href: url, download: `${session.held.meta.sid}.ndjson` } })
    link.click()
    setTimeout(() => URL.revokeObjectURL(url), 0)
  })
  const fileInput = el('input', {
    dataset: { loadFile: '' },
    attrs: { type: 'file', accept: '.ndjson,.jsonl,.json,.txt', title: 'load an NDJSON recording' },
  })
  const loadFiles = async (files: FileList | null | undefined): Promise<void> => {
    for (const file of Array.from(files ?? [])) host.load(await file.text())
    touch()
  }
  fileInput.addEventListener('change', () => void loadFiles(fileInput.files))
  const snapshot = el('button', { text: 'resync', dataset: { action: 'snapshot' } })
  snapshot.addEventListener('click', () => host.requestSnapshot())
  // A panel that fills its page (the standalone one) has nothing to close to.
  const closeButton =
    host.position === 'fill'
      ? undefined
      : el('button', {
          text: '✕',
          className: 'close',
          dataset: { action: 'close' },
          attrs: {
            title: host.hotkey === false ? 'close' : `close (${host.hotkey} opens it again)`,
            'aria-label': 'close the devtools panel',
          },
        })
  closeButton?.addEventListener('click', () => host.close())

  const gapBanner = el('div', { className: 'banner', dataset: { gap: '' } })
  const loadBanner = el('div', { className: 'banner error', dataset: { loadErrors: '' } })
  gapBanner.hidden = true
  loadBanner.hidden = true

  const countCells = new Map<string, HTMLElement>()
  const counts = el('div', { className: 'counts', dataset: { counts: '' } })
  const addCount = (state: string): HTMLElement => {
    const cell = el('b', { text: '0', dataset: { count: state } })
    counts.append(el('span', { className: 'count' }, [state, cell]))
    countCells.set(state, cell)
    return cell
  }
  for (const state of [...LIVE_STATES, ...TERMINAL_STATES]) addCount(state)
  const throughput = addCount('per-second')

  const textInput = (name: string, placeholder: string): HTMLInputElement => {
    const input = el('input', { dataset: { filter: name }, attrs: { type: 'search', placeholder } })
    input.addEventListener('input', () => {
      filter = { ...filter, [name]: input.value === '' ? undefined : input.value }
      touch()
    })
    return input
  }
  const stateFilter = el(
    'select',
    { dataset: { filter: 'state' } },
    STATE_FILTERS.map((state) =>
      el('option', { text: state === '' ? 'any state' : state, attrs: { value: state } }),
    ),
  )
  stateFilter.addEventListener('change', () => {
    const { states: _states, ...rest } = filter
    filter = stateFilter.value === '' ? rest : { ...rest, states: [stateFilter.value] }
    touch()
  })
  const ageFilter = el(
    'select',
    { dataset: { filter: 'settled-age' } },
    SETTLED_AGE.map(([value, text]) => el('option', { text, attrs: { value } })),
  )
  ageFilter.addEventListener('change', () => {
    const { hideSettledOlderThanMs: _age, ...rest } = filter
    filter =
      ageFilter.value === '' ? rest : { ...rest, hideSettledOlderThanMs: Number(ageFilter.value) }
    touch()
  })
  const groupingPicker = el(
    'select',
    { dataset: { grouping: '' } },
    (['none', 'key', 'label'] as const).map((value) =>
      el('option', {
        text: value === 'none' ? 'no grouping' : `group by ${value}`,
        attrs: { value },
      }),
    ),
  )
  groupingPicker.addEventListener('change', () => {
    grouping = groupingPicker.value as Grouping
    touch()
  })
  const zoomIn = el('button', {
    text: '+',
    dataset: { action: 'zoom-in' },
    attrs: { title: 'zoom in' },
  })
  zoomIn.addEventListener('click', () => lanesView.zoom(0.5))
  const zoomOut = el('button', {
    text: '−',
    dataset: { action: 'zoom-out' },
    attrs: { title: 'zoom out' },
  })
  zoomOut.addEventListener('click', () => lanesView.zoom(2))
  const follow = el('button', { text: 'follow now', dataset: { action: 'follow' } })
  follow.addEventListener('click', () => {
    lanesView.follow = true
    lanesView.span = undefined
    touch()
  })

  // What an empty panel says: how to get a session into it.
  const emptyHint = el('div', { className: 'empty hint', dataset: { emptyHint: '' } }, [
    el('p', {
      text:
        host.relayUrl === undefined
          ? 'No session yet: the runtime has sent nothing, or load a recording (NDJSON) with the file picker or by dropping it here.'
          : 'No session yet. Connect a Node process to this panel:',
    }),
    ...(host.relayUrl === undefined
      ? []
      : [
          el('pre', {
            text: `import { connectDevtools, createWebSocketTransport } from '@vega/job-devtools-protocol'\nimport { WebSocket } from 'ws' // Node 20; Node 22 has a global WebSocket\n\nconnectDevtools(runtime, createWebSocketTransport('${host.relayUrl}', { WebSocket }))`,
          }),
          el('p', {
            text: 'or load a recording (NDJSON) with the file picker or by dropping it here.',
          }),
        ]),
  ])

  const root = el('div', { className: 'root', dataset: { panel: '' } }, [
    el('header', {}, [
      el('strong', { text: '@vega/job devtools' }),
      sessionPicker,
      connection,
      pause,
      clear,
      exportButton,
      snapshot,
      fileInput,
      ...(closeButton === undefined ? [] : [closeButton]),
    ]),
    gapBanner,
    loadBanner,
    counts,
    el('div', { className: 'filters' }, [
      textInput('key', 'key'),
      textInput('label', 'label'),
      stateFilter,
      textInput('text', 'search'),
      ageFilter,
      groupingPicker,
      zoomIn,
      zoomOut,
      follow,
    ]),
    legend(),
    el('div', { className: 'main' }, [
      el('div', { className: 'timeline' }, [lanesView.axis, lanesView.element, emptyHint]),
      el('div', { className: 'side' }, [detailsView.element, logView.element]),
    ]),
  ])
  root.addEventListener('dragover', (event) => {
    event.preventDefault()
    root.classList.add('dragging')
  })
  root.addEventListener('dragleave', () => root.classList.remove('dragging'))
  root.addEventListener('drop', (event) => {
    event.preventDefault()
    root.classList.remove('dragging')
    void loadFiles(event.dataTransfer?.files)
  })
  const style = el('style', { text: PANEL_CSS })
  host.shadow.append(style, root)

  /**
   * The session to show: one a load just added, else the one the user
   * picked, else the newest (a page that starts a runtime per run, as the
   * lab does, shows its latest run).
   */
  const pickSession = (): void => {
    const preferred = host.takePreferredSession()
    if (preferred !== undefined && model.sessions.has(preferred)) {
      selectedSession = preferred
      sessionPicked = true
    }
    const kept =
      selectedSession === SIDE_BY_SIDE
        ? model.sessions.size > 1
        : selectedSession !== undefined && model.sessions.has(selectedSession)
    if (!(sessionPicked && kept)) {
      const newest = [...model.sessions.keys()].at(-1)
      if (newest !== selectedSession) selectedTask = undefined
      selectedSession = newest
    }
    const shown = shownSessions().map((session) => session.key)
    if (focusKey === undefined || !shown.includes(focusKey)) {
      focusKey =
        selectedTask !== undefined && shown.includes(selectedTask.session)
          ? selectedTask.session
          : shown.at(-1)
    }
  }

  const renderHeader = (): void => {
    const keys = [...model.sessions.keys()]
    // With two sessions or more, the last option shows them all side by side.
    const choices = keys.length > 1 ? [...keys, SIDE_BY_SIDE] : keys
    while (sessionPicker.options.length > choices.length) sessionPicker.lastElementChild?.remove()
    choices.forEach((key, index) => {
      const session = model.sessions.get(key)
      const meta = session?.held.meta
      const lost = key === SIDE_BY_SIDE ? 0 : model.lostInGaps(key)
      const text =
        session === undefined || meta === undefined
          ? `all ${keys.length} sessions, side by side`
          : `${meta.src.runtime} · ${meta.sid}${session.origin === 'recording' ? ' · recording' : ''}${lost > 0 ? ` · gaps ${lost}` : ''}`
      let option = sessionPicker.options[index]
      if (option === undefined) {
        option = el('option')
        sessionPicker.append(option)
      }
      if (option.value !== key) option.value = key
      setText(option, text)
    })
    if (selectedSession !== undefined && sessionPicker.value !== selectedSession)
      sessionPicker.value = selectedSession
    const state = host.connectionState()
    if (connection.dataset.connection !== state) connection.dataset.connection = state
    setText(connection, paused ? `${state} · paused` : state)
    const lastLoad = host.lastLoad()
    const loadFailed = lastLoad !== undefined && lastLoad.errors.length > 0
    if (loadBanner.hidden === loadFailed) loadBanner.hidden = !loadFailed
    if (lastLoad !== undefined && loadFailed) {
      setText(
        loadBanner,
        `Recording: kept ${lastLoad.envelopes} envelopes; could not read ${lastLoad.errors
          .map((error) => `line ${error.line} (${error.message})`)
          .join('; ')}`,
      )
    }
  }

  /** The selected task's id, when it is of this session. */
  const selectedIn = (session: PanelSession): number | undefined =>
    selectedTask?.session === session.key ? selectedTask.id : undefined

  // Time goes on without events: a running or parked bar keeps growing, and
  // per second (the second before now) falls to 0 in an idle session.
  // Twice a second is enough for both, and costs nothing while closed;
  // paused, the panel stays as it was.
  const clock = setInterval(() => {
    if (!paused) touch()
  }, 500)

  return {
    render(withData) {
      const dataNew = withData && !paused && drawnRevision !== model.revision
      if (!uiDirty && !dataNew) {
        if (!logBehind) return false
        // The second half of a drawing of new data: the log, a frame after the lanes.
        logBehind = false
        logView.measure()
        const session = focusKey === undefined ? undefined : model.sessions.get(focusKey)
        logView.place(session?.log.size ?? 0)
        if (session !== undefined) {
          logView.render(session, selectedIn(session))
          detailsView.render(session, selectedIn(session))
        }
        logView.commitScroll()
        return true
      }
      // New data alone is drawn over two frames (each lays out half the
      // texts); what the user changed, in one.
      const split = !uiDirty
      uiDirty = false
      logBehind = false
      drawnRevision = model.revision
      // Every layout read first, then only writes: one layout per frame.
      lanesView.measure()
      logView.measure()
      pickSession()
      const shown = shownSessions()
      const session = focusKey === undefined ? undefined : model.sessions.get(focusKey)
      logView.place(session?.log.size ?? 0)
      renderHeader()
      if (emptyHint.hidden !== (session !== undefined)) emptyHint.hidden = session !== undefined
      if (session === undefined || shown.length === 0) {
        gapBanner.hidden = true
        for (const cell of countCells.values()) setText(cell, '0')
        lanesView.clear()
        logView.commitScroll()
        return true
      }
      // Side by side, every figure is the sum over the sessions shown.
      const sum = (of: (shown: PanelSession) => number) =>
        shown.reduce((total, each) => total + of(each), 0)
      const lost = sum((each) => model.lostInGaps(each.key))
      const trimmedTasks = sum((each) => each.trimmedTasks)
      const trimmedLog = sum((each) => each.log.trimmed)
      const parts: string[] = []
      if (lost > 0) parts.push(`${lost} events lost in gaps`)
      if (trimmedTasks > 0) parts.push(`${trimmedTasks} tasks trimmed by retention`)
      if (trimmedLog > 0) parts.push(`${trimmedLog} older events dropped from the log`)
      if (gapBanner.hidden !== (parts.length === 0)) gapBanner.hidden = parts.length === 0
      setData(gapBanner, 'gap', String(lost))
      setData(gapBanner, 'trimmed', String(trimmedTasks))
      setText(gapBanner, parts.length === 0 ? '' : `⚠ ${parts.join(' · ')}`)
      const live = shown.map((each) => model.liveCounts(each.key))
      for (const state of LIVE_STATES) {
        setCount(
          countCells.get(state),
          live.reduce((total, counts) => total + (counts[state] ?? 0), 0),
        )
      }
      for (const state of TERMINAL_STATES)
        setCount(
          countCells.get(state),
          sum((each) => each.settled[state] ?? 0),
        )
      setCount(
        throughput,
        sum((each) => model.throughput(each.key, model.sessionNow(each.key))),
      )
      const { rows, sessionOf } = lanesOf(shown)
      const sessionOrder = [...model.sessions.keys()]
      const processOf =
        shown.length > 1
          ? (task: TaskTimeline): ProcessTag => {
              const owner = sessionOf(task)
              const index = sessionOrder.indexOf(owner.key)
              return {
                name: owner.held.meta.src.runtime,
                color: PROCESS_COLORS[index % PROCESS_COLORS.length] as string,
              }
            }
          : undefined
      const frame: LanesFrame = {
        rows,
        sessionOf,
        processOf,
        selected: selectedTask,
        showKey: grouping === 'key',
        firstTs: Math.min(...shown.map((each) => each.firstTs)),
        now: Math.max(...shown.map((each) => model.sessionNow(each.key))),
      }
      lanesView.render(frame)
      if (split) {
        logBehind = true
        host.invalidate()
        return true
      }
      logView.render(session, selectedIn(session))
      detailsView.render(session, selectedIn(session))
      logView.commitScroll()
      return true
    },
    isCurrent() {
      return !uiDirty && !logBehind && (paused || drawnRevision === model.revision)
    },
    destroy() {
      clearInterval(clock)
      style.remove()
      root.remove()
    },
  }
}

/** The legend: one swatch per state from the shared palette, then the marks. */
function legend(): HTMLElement {
  const items: HTMLElement[] = STATE_STYLES.map((style) =>
    el('span', { className: 'legend-item', dataset: { legendState: style.name } }, [
      el('i', {
        className: 'swatch',
        attrs: { style: `background: ${style.background}`, 'aria-hidden': 'true' },
      }),
      style.name === 'parked'
        ? 'parked (hatched: waiting on a coordinator, shaper, dependencies or retry)'
        : style.name === 'idle'
          ? 'idle (not yet queued)'
          : style.name === 'success' || style.name === 'error' || style.name === 'cancelled'
            ? `ends ${style.name}`
            : style.name,
    ]),
  )
  const mark = (kind: string, glyph: string, text: string) =>
    el('span', { className: 'legend-item', dataset: { legendMark: kind } }, [
      el('b', { text: glyph, attrs: { style: `color: ${MARK_COLORS[kind] ?? '#fff'}` } }),
      text,
    ])
  items.push(
    mark('retry', '|', 'retry'),
    mark('restart', '▲', 'restarted'),
    mark('reuse', '●', 'reused / queued behind'),
    el('span', { className: 'legend-item' }, ['✕ reason: why it was cancelled']),
  )
  return el('div', { className: 'legend', dataset: { legend: '' } }, items)
}

function setCount(cell: HTMLElement | undefined, value: number): void {
  if (cell !== undefined) setText(cell, String(value))
}
