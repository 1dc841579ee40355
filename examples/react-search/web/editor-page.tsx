import { exhaustCoordinator, withCoordinator } from '@vega/job-coordination'
import type { TaskFn } from '@vega/job-core'
import { useTask } from '@vega/job-react'
import { useState } from 'react'
import { type Saved, saveDraft } from './api.js'

// Clicks while a save runs are dropped (cancelled, 'exhaust-dropped').
const exhaust = (taskFn: TaskFn<Saved>) =>
  withCoordinator(taskFn, exhaustCoordinator, { key: 'draft' })

/**
 * A draft and its save button. A save goes on when you leave the page
 * ('keep'). The button and the status beside it both follow the save that
 * runs: a click dropped while it runs is counted, not shown as the state
 * (`save.state` is the latest click's, which exhaust cancelled).
 */
export function EditorPage() {
  const [text, setText] = useState('')
  const [dropped, setDropped] = useState(0)
  const save = useTask(saveDraft, { label: 'save', bind: exhaust, onUnmount: 'keep' })
  const onSave = () => {
    // A click while nothing saves starts a save: its dropped clicks start from 0.
    if (!save.isRunning) setDropped(0)
    const task = save.run(text)
    task.promise.catch(() => {
      if (task.cancelReason === 'exhaust-dropped') setDropped((count) => count + 1)
    })
  }
  const droppedText =
    dropped === 0 ? '' : ` · ${dropped} click${dropped === 1 ? '' : 's'} dropped while saving`
  const status = save.isRunning
    ? `saving…${droppedText}`
    : save.value === undefined
      ? save.state
      : `saved version ${save.value.version} (${save.value.length} chars)${droppedText}`
  return (
    <section>
      <h2>Editor</h2>
      <textarea
        data-testid="draft"
        aria-label="draft"
        value={text}
        onChange={(event) => setText(event.target.value)}
      />
      <button type="button" data-testid="save" onClick={onSave}>
        {save.isRunning ? 'saving…' : 'save'}
      </button>{' '}
      <span data-testid="save-state" className="muted">
        {status}
      </span>
    </section>
  )
}
