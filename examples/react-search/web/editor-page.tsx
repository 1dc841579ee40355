import { exhaustCoordinator, withCoordinator } from '@vega/job-coordination'
import type { TaskFn } from '@vega/job-core'
import { useTask } from '@vega/job-react'
import { useState } from 'react'
import { type Saved, saveDraft } from './api.js'

// Clicks while a save runs are dropped (cancelled, 'exhaust-dropped').
const exhaust = (taskFn: TaskFn<Saved>) =>
  withCoordinator(taskFn, exhaustCoordinator, { key: 'draft' })

/** A draft and its save button. A save goes on when you leave the page ('keep'). */
export function EditorPage() {
  const [text, setText] = useState('')
  const save = useTask(saveDraft, { label: 'save', bind: exhaust, onUnmount: 'keep' })
  return (
    <section>
      <h2>Editor</h2>
      <textarea
        data-testid="draft"
        aria-label="draft"
        value={text}
        onChange={(event) => setText(event.target.value)}
      />
      <button type="button" data-testid="save" onClick={() => save.run(text)}>
        {save.isRunning ? 'saving…' : 'save'}
      </button>{' '}
      <span data-testid="save-state" className="muted">
        {save.value === undefined
          ? save.state
          : `saved version ${save.value.version} (${save.value.length} chars)`}
      </span>
    </section>
  )
}
