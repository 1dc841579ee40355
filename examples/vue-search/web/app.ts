import { type CustomRuntimeEvent, useCounts, useRuntimeEvent } from '@vega/job-vue'
import { defineComponent, h, onScopeDispose, ref } from 'vue'
import { EditorPage } from './editor-page.js'
import { SearchPage } from './search-page.js'

type Route = 'search' | 'editor'

const readRoute = (): Route => (location.hash === '#/editor' ? 'editor' : 'search')

export const App = defineComponent({
  name: 'App',
  setup() {
    const route = ref<Route>(readRoute())
    const onHashChange = () => {
      route.value = readRoute()
    }
    addEventListener('hashchange', onHashChange)
    onScopeDispose(() => removeEventListener('hashchange', onHashChange))
    const link = (to: Route, label: string) =>
      h(
        'a',
        {
          href: `#/${to}`,
          'data-testid': `to-${to}`,
          'aria-current': route.value === to ? 'page' : undefined,
        },
        label,
      )
    return () => [
      h('h1', '@vega/job-vue'),
      h('nav', [link('search', 'Search'), link('editor', 'Editor')]),
      route.value === 'search' ? h(SearchPage) : h(EditorPage),
      h(Footer),
    ]
  },
})

type Kind = 'search' | 'search-answered' | 'doc' | 'save'

/** What the runtime holds now (useCounts), and the requests the "server" got. */
const Footer = defineComponent({
  name: 'AppFooter',
  setup() {
    const counts = useCounts()
    const requests = ref<Record<Kind, number>>({ search: 0, 'search-answered': 0, doc: 0, save: 0 })
    useRuntimeEvent('api:request', (event: CustomRuntimeEvent) => {
      requests.value[event.kind as Kind]++
    })
    return () => {
      const { running, queued, parked, live } = counts.value
      const seen = requests.value
      return h('footer', [
        h(
          'div',
          { 'data-testid': 'counts', 'data-running': running, 'data-live': live },
          `${running} running · ${queued + parked} waiting · ${live} live`,
        ),
        h(
          'div',
          {
            'data-testid': 'requests',
            'data-search': seen.search,
            'data-answered': seen['search-answered'],
            'data-doc': seen.doc,
            'data-save': seen.save,
          },
          `searches ${seen.search} (answered ${seen['search-answered']}) · documents ${seen.doc} · saves ${seen.save}`,
        ),
      ])
    }
  },
})
