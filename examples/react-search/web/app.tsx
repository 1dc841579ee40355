import { type CustomRuntimeEvent, useCounts, useRuntimeEvent } from '@vega/job-react'
import { useState, useSyncExternalStore } from 'react'
import { EditorPage } from './editor-page.js'
import { SearchPage } from './search-page.js'

type Route = 'search' | 'editor'

const readRoute = (): Route => (location.hash === '#/editor' ? 'editor' : 'search')
const onHashChange = (change: () => void) => {
  addEventListener('hashchange', change)
  return () => removeEventListener('hashchange', change)
}

export function App() {
  const route = useSyncExternalStore(onHashChange, readRoute, () => 'search' as const)
  return (
    <>
      <h1>@vega/job-react</h1>
      <nav>
        <a href="#/search" data-testid="to-search" aria-current={route === 'search' && 'page'}>
          Search
        </a>
        <a href="#/editor" data-testid="to-editor" aria-current={route === 'editor' && 'page'}>
          Editor
        </a>
      </nav>
      {route === 'search' ? <SearchPage /> : <EditorPage />}
      <Footer />
    </>
  )
}

type Kind = 'search' | 'search-answered' | 'doc' | 'save'
const NO_REQUESTS: Record<Kind, number> = { search: 0, 'search-answered': 0, doc: 0, save: 0 }

/** What the runtime holds now (useCounts), and the requests the "server" got. */
function Footer() {
  // `running` counts bodies holding a slot, a cancelled body that has not
  // exited yet included (`exiting`): shown apart, running never exceeds live.
  const { running, exiting, queued, parked, live } = useCounts()
  const [requests, setRequests] = useState(NO_REQUESTS)
  useRuntimeEvent('api:request', (event: CustomRuntimeEvent) => {
    const kind = event.kind as Kind
    setRequests((seen) => ({ ...seen, [kind]: seen[kind] + 1 }))
  })
  return (
    <footer>
      <div
        data-testid="counts"
        data-running={running - exiting}
        data-exiting={exiting}
        data-live={live}
        title="running: tasks whose body runs · exiting: cancelled tasks whose body has not returned yet · waiting: queued or parked · live: tasks not ended"
      >
        {`${running - exiting} running · ${exiting} exiting · ${queued + parked} waiting · ${live} live`}
      </div>
      <div
        data-testid="requests"
        data-search={requests.search}
        data-answered={requests['search-answered']}
        data-doc={requests.doc}
        data-save={requests.save}
      >
        {`searches ${requests.search} (answered ${requests['search-answered']}) · documents ${requests.doc} · saves ${requests.save}`}
      </div>
    </footer>
  )
}
