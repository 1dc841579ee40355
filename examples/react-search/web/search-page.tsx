import { dedupeCoordinator, restartCoordinator, withCoordinator } from '@vega/job-coordination'
import type { TaskFn } from '@vega/job-core'
import { useTask } from '@vega/job-react'
import { useEffect } from 'react'
import { type Doc, loadDoc, searchDocs } from './api.js'

const restart = (taskFn: TaskFn<number[]>) =>
  withCoordinator(taskFn, restartCoordinator, { key: 'search' })

// Rows and the preview load documents by id; two of them asking for one id
// at once share one request.
const dedupeById = (taskFn: TaskFn<Doc>, id: number) =>
  withCoordinator(taskFn, dedupeCoordinator, { key: ['doc', id] })

/** Search-as-you-type: each keystroke restarts the search, the newest one wins. */
export function SearchPage() {
  const search = useTask(searchDocs, { label: 'search', bind: restart })
  const ids = search.value ?? []
  return (
    <section>
      <h2>Search</h2>
      <input
        data-testid="query"
        aria-label="search documents"
        placeholder="type: v, ve, veg…"
        onChange={(event) => search.run(event.target.value)}
      />
      <p data-testid="search-state" className="muted">
        {search.isRunning ? 'searching…' : `${search.state}, ${ids.length} results`}
      </p>
      {ids[0] !== undefined && <Preview id={ids[0]} />}
      <ul data-testid="results">
        {ids.map((id) => (
          <ResultRow key={id} id={id} />
        ))}
      </ul>
    </section>
  )
}

function useDoc(id: number) {
  const doc = useTask(loadDoc, { label: 'doc', bind: dedupeById })
  useEffect(() => {
    doc.run(id)
  }, [doc, id])
  return doc
}

function ResultRow({ id }: { id: number }) {
  const doc = useDoc(id)
  return <li data-doc={id}>{doc.value?.title ?? 'loading…'}</li>
}

function Preview({ id }: { id: number }) {
  const doc = useDoc(id)
  return (
    <article data-testid="preview">
      {doc.value === undefined ? 'loading…' : <p>{doc.value.body}</p>}
    </article>
  )
}
