import type { TaskTimeline, TimelineEntry, WireValue } from '@vega/job-devtools-protocol'
import type { PanelSession } from '../internal/model.js'
import { el } from './dom.js'

/**
 * The selected task: its transitions with durations, attempts, how it was
 * cancelled (`cancelledBy` is a link that selects the canceller), its parent,
 * children and dedupe joiners.
 */
export class DetailsView {
  readonly element: HTMLDivElement
  private shown: TaskTimeline | undefined

  constructor(private readonly onSelect: (taskId: number) => void) {
    this.element = el('div', { className: 'details', dataset: { details: '' } }, [
      el('p', { className: 'empty', text: 'Select a lane or a log row.' }),
    ])
  }

  render(session: PanelSession, selected: number | undefined): void {
    const task = selected === undefined ? undefined : session.held.tasks.get(selected)
    if (task === this.shown) return
    this.shown = task
    if (task === undefined) {
      delete this.element.dataset.selectedTask
      this.element.replaceChildren(
        el('p', {
          className: 'empty',
          text:
            selected === undefined
              ? 'Select a lane or a log row.'
              : `Task #${selected} is not retained.`,
        }),
      )
      return
    }
    this.element.dataset.selectedTask = String(task.id)
    const facts: Array<[string, Node | string]> = [
      ['state', task.lost === true ? `${task.state} (ended unobserved)` : task.state],
      ['attempts', String(task.attempt)],
    ]
    if (task.key !== undefined) facts.push(['key', task.key])
    if (task.cancelReason !== undefined) facts.push(['cancelReason', task.cancelReason])
    if (task.links.cancelledBy !== undefined) {
      facts.push(['cancelledBy', this.link(session, task.links.cancelledBy, 'cancelledBy')])
    }
    if (task.error !== undefined) facts.push(['error', describeWire(task.error)])
    if (task.parentId !== undefined)
      facts.push(['parent', this.link(session, task.parentId, 'parent')])
    const lists: Array<[string, readonly number[], string]> = [
      ['children', task.links.children, 'child'],
      ['cancelled', task.links.cancelled, 'cancelled'],
      ['reused by', task.links.reusedBy, 'reusedBy'],
    ]
    for (const [name, ids, kind] of lists) {
      if (ids.length === 0) continue
      facts.push([
        name,
        el(
          'span',
          {},
          ids.map((id) => this.link(session, id, kind)),
        ),
      ])
    }
    if (task.links.reuses !== undefined)
      facts.push(['reuses', this.link(session, task.links.reuses, 'reuses')])
    if (task.links.queuedBehind !== undefined) {
      facts.push(['queued behind', this.link(session, task.links.queuedBehind, 'queuedBehind')])
    }
    const list = el('dl')
    for (const [name, value] of facts) list.append(el('dt', { text: name }), el('dd', {}, [value]))
    this.element.replaceChildren(
      el('h3', { text: `#${task.id} ${task.label ?? ''}` }),
      list,
      el('ol', { dataset: { transitions: '' } }, transitions(task.entries)),
    )
  }

  private link(session: PanelSession, id: number, kind: string): HTMLButtonElement {
    const label = session.held.tasks.get(id)?.label
    const button = el('button', {
      className: 'link',
      text: `#${id}${label === undefined ? '' : ` ${label}`}`,
      dataset: { link: kind, taskLink: String(id) },
    })
    button.addEventListener('click', () => this.onSelect(id))
    return button
  }
}

function transitions(entries: readonly TimelineEntry[]): HTMLLIElement[] {
  const changes = entries.filter(
    (entry) => entry.kind === 'transition' || entry.kind === 'created' || entry.kind === 'snapshot',
  )
  return changes.map((entry, index) => {
    const next = changes[index + 1]
    // The time a task spent in the state this entry entered, up to the next change.
    const reached =
      entry.kind === 'transition' ? entry.to : entry.kind === 'snapshot' ? entry.state : undefined
    const duration =
      next === undefined || reached === undefined ? '' : ` · ${next.ts - entry.ts} ms in ${reached}`
    const text =
      entry.kind === 'transition'
        ? `${entry.from} → ${entry.to}${entry.reason === undefined ? '' : ` (${entry.reason})`}`
        : entry.kind === 'snapshot'
          ? `snapshot: ${entry.state}`
          : 'created'
    return el('li', { text: `seq ${entry.seq}: ${text}${duration}` })
  })
}

function describeWire(value: WireValue): string {
  if (typeof value === 'object' && value !== null && !Array.isArray(value)) {
    const tagged = value as {
      readonly __type?: unknown
      readonly name?: unknown
      readonly message?: unknown
    }
    if (tagged.__type === 'Error') return `${String(tagged.name)}: ${String(tagged.message)}`
  }
  return JSON.stringify(value)
}
