import { dedupeCoordinator, restartCoordinator, withCoordinator } from '@vega/job-coordination'
import type { TaskFn } from '@vega/job-core'
import { useTask } from '@vega/job-vue'
import { defineComponent, h, watch } from 'vue'
import { type Doc, loadDoc, searchDocs } from './api.js'

const restart = (taskFn: TaskFn<number[]>) =>
  withCoordinator(taskFn, restartCoordinator, { key: 'search' })

// Rows and the preview load documents by id; two of them asking for one id
// at once share one request.
const dedupeById = (taskFn: TaskFn<Doc>, id: number) =>
  withCoordinator(taskFn, dedupeCoordinator, { key: ['doc', id] })

/** Search-as-you-type: each keystroke restarts the search, the newest one wins. */
export const SearchPage = defineComponent({
  name: 'SearchPage',
  setup() {
    const { run, isRunning, state, value } = useTask(searchDocs, { label: 'search', bind: restart })
    return () => {
      const ids = value.value ?? []
      return h('section', [
        h('h2', 'Search'),
        h('input', {
          'data-testid': 'query',
          'aria-label': 'search documents',
          placeholder: 'type: v, ve, veg…',
          onInput: (event: Event) => run((event.target as HTMLInputElement).value),
        }),
        h(
          'p',
          { 'data-testid': 'search-state', class: 'muted' },
          isRunning.value ? 'searching…' : `${state.value}, ${ids.length} results`,
        ),
        ids[0] === undefined ? null : h(Preview, { id: ids[0] }),
        h(
          'ul',
          { 'data-testid': 'results' },
          ids.map((id) => h(ResultRow, { key: id, id })),
        ),
      ])
    }
  },
})

/** The document `props.id`, loaded when the id is set or changes. */
function useDoc(props: { readonly id: number }) {
  const doc = useTask(loadDoc, { label: 'doc', bind: dedupeById })
  watch(
    () => props.id,
    (id) => {
      doc.run(id)
    },
    { immediate: true },
  )
  return doc
}

const ResultRow = defineComponent({
  name: 'ResultRow',
  props: { id: { type: Number, required: true } },
  setup(props) {
    const { value } = useDoc(props)
    return () => h('li', { 'data-doc': props.id }, value.value?.title ?? 'loading…')
  },
})

const Preview = defineComponent({
  name: 'DocPreview',
  props: { id: { type: Number, required: true } },
  setup(props) {
    const { value } = useDoc(props)
    return () =>
      h(
        'article',
        { 'data-testid': 'preview' },
        value.value === undefined ? 'loading…' : [h('p', value.value.body)],
      )
  },
})
