import type { LabCost } from './cost.js'
import { explainStrategy, LANE_LEGEND, MERGED_CALLS } from './explain.js'
import type { CoordinationRecord, PromiseOutcome, ScenarioResult, TaskOutcome } from './scenario.js'
import { describeEnd, drawLane, latestTs } from './swimlane.js'

/** ANSI styling; every function is the identity when colors are off. */
export interface Style {
  readonly bold: (text: string) => string
  readonly dim: (text: string) => string
  readonly green: (text: string) => string
  readonly red: (text: string) => string
  readonly yellow: (text: string) => string
  readonly cyan: (text: string) => string
}

const ansi = (open: number, close: number) => (text: string) =>
  `\u001b[${open}m${text}\u001b[${close}m`

export function createStyle(color: boolean): Style {
  if (!color) {
    const plain = (text: string) => text
    return { bold: plain, dim: plain, green: plain, red: plain, yellow: plain, cyan: plain }
  }
  return {
    bold: ansi(1, 22),
    dim: ansi(2, 22),
    green: ansi(32, 39),
    red: ansi(31, 39),
    yellow: ansi(33, 39),
    cyan: ansi(36, 39),
  }
}

/** `undefined`, `1`, `"text"`: a value as JSON would show it, `undefined` included. */
export function formatValue(value: unknown): string {
  return value === undefined ? 'undefined' : (JSON.stringify(value) ?? String(value))
}

export function formatTask(task: TaskOutcome): string {
  const details: string[] = []
  if (task.cancelReason !== undefined) details.push(task.cancelReason)
  if (task.cancelledBy !== undefined) details.push(`by #${task.cancelledBy}`)
  return details.length === 0 ? task.state : `${task.state} (${details.join(', ')})`
}

export function formatPromise(promise: PromiseOutcome): string {
  if (promise.status === 'resolved') return `resolved ${formatValue(promise.value)}`
  return promise.reason === undefined
    ? `rejected ${promise.error}`
    : `rejected ${promise.error} (${promise.reason})`
}

/** What a `coordination:*` event says, in a few words. */
export function formatEvent(event: CoordinationRecord): string {
  const intent = `#${String(event.intentId)}`
  switch (event.type) {
    case 'coordination:reuse':
      return `${intent} reuses #${String(event.peerId)}`
    case 'coordination:restart':
      return `${intent} cancelled ${(event.cancelledPeerIds as readonly number[]).map((id) => `#${id}`).join(', ')}`
    case 'coordination:queued':
      return `${intent} queued, ${String(event.position)} ahead`
    case 'coordination:orphaned-intent':
      return `${intent} decided nothing`
    case 'coordination:dropped':
      return `${intent} dropped while #${String(event.peerId)} runs`
  }
}

/** `cancelled dedupe ×3`: runs of equal cells, squeezed. */
export function squeeze(cells: readonly string[]): string {
  const out: string[] = []
  let index = 0
  while (index < cells.length) {
    let count = 1
    while (cells[index + count] === cells[index]) count++
    out.push(count === 1 ? cells[index]! : `${cells[index]} ×${count}`)
    index += count
  }
  return out.join(', ')
}

function colorState(text: string, style: Style): string {
  if (text.startsWith('success')) return style.green(text)
  if (text.startsWith('cancelled')) return style.yellow(text)
  if (text.startsWith('error')) return style.red(text)
  return text
}

function colorPromise(text: string, style: Style): string {
  return text.startsWith('resolved') ? style.green(text) : style.red(text)
}

const pad = (text: string, width: number) => text + ' '.repeat(Math.max(0, width - text.length))

/** `1 call`, `4 calls`. */
export const plural = (count: number, word: string) => `${count} ${word}${count === 1 ? '' : 's'}`

/** Breaks `text` into lines of at most `width` characters, at spaces. */
export function wrap(text: string, width: number): string[] {
  const lines: string[] = []
  let line = ''
  for (const word of text.split(' ')) {
    if (line !== '' && line.length + 1 + word.length > width) {
      lines.push(line)
      line = word
    } else {
      line = line === '' ? word : `${line} ${word}`
    }
  }
  if (line !== '') lines.push(line)
  return lines
}

/** One strategy: headline, bodies, the outcome table, events and swimlanes. */
export function formatRun(result: ScenarioResult, style: Style): string {
  const lines: string[] = []
  const coordinator =
    result.coordinator === null ? 'plain run()' : `coordinator "${result.coordinator}"`
  lines.push(
    `${style.bold(style.cyan(`== ${result.strategy}`))}  ${style.dim(
      `${coordinator} · ${plural(result.calls, 'call')} on key ${JSON.stringify(result.key)} · body sleeps ${result.duration} ms · took ${result.elapsedMs} ms`,
    )}`,
  )
  for (const line of wrap(explainStrategy(result.name, result.limit), 76)) lines.push(`  ${line}`)
  lines.push('')
  const bodies = result.bodies.length === 0 ? 'none' : result.bodies.map((c) => `#${c}`).join(' ')
  lines.push(`  bodies run: ${style.bold(String(result.executions))}  ${style.dim(`(${bodies})`)}`)
  lines.push('')

  const rows = result.tasks.map((task, index) => {
    const promise = result.promises[index]
    return [
      `#${task.call}`,
      formatTask(task),
      promise === undefined ? '' : formatPromise(promise),
    ] as const
  })
  const stateWidth = Math.max('task state'.length, ...rows.map((row) => row[1].length))
  lines.push(style.dim(`  call  ${pad('task state', stateWidth)}  promise`))
  for (const [call, state, promise] of rows) {
    lines.push(
      `  ${pad(call, 4)}  ${colorState(pad(state, stateWidth), style)}  ${colorPromise(promise, style)}`,
    )
  }
  lines.push('')

  if (result.events.length === 0) {
    lines.push(`  events: ${style.dim('none')}`)
  } else {
    lines.push('  events:')
    const typeWidth = Math.max(...result.events.map((event) => event.type.length))
    for (const event of result.events) {
      lines.push(
        `    ${pad(event.type, typeWidth)}  ${style.cyan(`[${String(event.coordinator)}]`)}  ${formatEvent(event)}`,
      )
    }
  }
  lines.push('')

  // At least one body's duration wide, so a run that ended at once reads as "at once";
  // the axis then says so, instead of a span that contradicts the headline.
  const lastTs = latestTs(result.lanes, result.startTs)
  const endTs = Math.max(lastTs, result.startTs + Math.max(1, result.duration))
  const width = 40
  const span = `${endTs - result.startTs} ms`
  const stretched =
    endTs > lastTs
      ? `  (axis = one body's ${result.duration} ms; every call ended within ${lastTs - result.startTs} ms)`
      : ''
  // The axis sits over the brackets' inside: 0 under the first column, the span over the last.
  lines.push(
    style.dim(`  lanes 0 ms${' '.repeat(Math.max(1, width - 4 - span.length))}${span}${stretched}`),
  )
  const callOf = (taskId: number) =>
    result.tasks.find((task) => task.taskId === taskId)?.call ?? taskId
  for (const lane of result.lanes) {
    const marks = lane.marks.map((mark) => mark.text)
    lines.push(
      `  #${pad(String(callOf(lane.taskId)), 4)}${drawLane(lane, { startTs: result.startTs, endTs, width })} ${colorState(
        describeEnd(lane, callOf),
        style,
      )}${marks.length === 0 ? '' : style.dim(`  · ${marks.join(' · ')}`)}`,
    )
  }
  return lines.join('\n')
}

/** The facts table in one screen: one row per strategy. */
export function formatSummary(results: readonly ScenarioResult[], style: Style): string {
  const rows = results.map((result) => [
    result.strategy,
    String(result.executions),
    squeeze(result.tasks.map((task) => [task.state, task.cancelReason ?? ''].join(' ').trim())),
    squeeze(
      result.promises.map((promise) =>
        promise.status === 'resolved'
          ? formatValue(promise.value)
          : `rejected ${promise.reason ?? promise.error}`,
      ),
    ),
    squeeze(
      result.events.map(
        (event) => `${event.type.slice('coordination:'.length)} [${String(event.coordinator)}]`,
      ),
    ) || '-',
  ])
  const header = ['strategy', 'bodies', 'tasks', 'promises', 'events']
  const widths = header.map((title, column) =>
    Math.max(title.length, ...rows.map((row) => row[column]!.length)),
  )
  const line = (cells: readonly string[]) =>
    `  ${cells.map((cell, column) => (column === cells.length - 1 ? cell : pad(cell, widths[column]!))).join('  ')}`
  return [style.bold('summary'), style.dim(line(header)), ...rows.map((row) => line(row))].join(
    '\n',
  )
}

/** `--cost`: what one call of each strategy costs, next to a plain task. */
export function formatCosts(costs: readonly LabCost[], style: Style): string {
  const first = costs[0]
  if (first === undefined) return ''
  const us = (ns: number) => `${(ns / 1000).toFixed(1)} µs`
  const times = (ratio: number) => `${ratio.toFixed(2)}×`
  const rows = costs.map((cost) => [
    cost.strategy,
    us(cost.burstNs),
    times(cost.vsPlainTask.burst),
    us(cost.uncontendedNs),
    times(cost.vsPlainTask.uncontended),
  ])
  const header = ['strategy', 'burst', 'vs plain task', 'one after another', 'vs plain task']
  const widths = header.map((title, column) =>
    Math.max(title.length, ...rows.map((row) => row[column]!.length)),
  )
  const line = (cells: readonly string[]) =>
    `  ${cells
      .map((cell, column) => pad(cell, widths[column]!))
      .join('  ')
      .trimEnd()}`
  return [
    style.bold('cost per call'),
    ...wrap(
      `A burst of ${first.burstCalls} calls over ${first.keys} keys, and ${first.uncontendedCalls} calls one after another, each round next to a plain task (run without a coordinator) in the same process; medians of ${first.rounds} rounds. Rough figures: bench/ measures them against hand-written code and peers.`,
      78,
    ).map((text) => style.dim(text)),
    style.dim(line(header)),
    ...rows.map((row) => line(row)),
  ].join('\n')
}

/** The whole human-readable report. */
export function formatReport(results: readonly ScenarioResult[], style: Style): string {
  const first = results[0]
  const title =
    first === undefined
      ? []
      : [
          [
            ...wrap(
              `@vega/lab · what a coordinator does with repeated calls: ${plural(first.calls, 'call')} with one key, issued back-to-back on a real runtime; call i's body sleeps ${first.duration} ms and returns i.`,
              80,
            ).map((line, index) =>
              index === 0 ? line.replace('@vega/lab', style.bold('@vega/lab')) : line,
            ),
            ...wrap(MERGED_CALLS, 78),
            style.dim(`lanes: ${LANE_LEGEND}`),
          ].join('\n'),
        ]
  return [
    ...title,
    ...results.map((result) => formatRun(result, style)),
    formatSummary(results, style),
  ].join('\n\n')
}
