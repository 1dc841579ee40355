import { exhaustCoordinator, withCoordinator } from '@vega/job-coordination'
import type { TaskFn } from '@vega/job-core'
import { useTask } from '@vega/job-vue'
import { defineComponent, h, ref } from 'vue'
import { type Saved, saveDraft } from './api.js'

// Clicks while a save runs are dropped (cancelled, 'exhaust-dropped').
const exhaust = (taskFn: TaskFn<Saved>) =>
  withCoordinator(taskFn, exhaustCoordinator, { key: 'draft' })

/** A draft and its save button. A save goes on when you leave the page ('keep'). */
export const EditorPage = defineComponent({
  name: 'EditorPage',
  setup() {
    const text = ref('')
    const { run, isRunning, state, value } = useTask(saveDraft, {
      label: 'save',
      bind: exhaust,
      onUnmount: 'keep',
    })
    return () => {
      const saved = value.value
      return h('section', [
        h('h2', 'Editor'),
        h('textarea', {
          'data-testid': 'draft',
          'aria-label': 'draft',
          value: text.value,
          onInput: (event: Event) => {
            text.value = (event.target as HTMLTextAreaElement).value
          },
        }),
        h(
          'button',
          { type: 'button', 'data-testid': 'save', onClick: () => run(text.value) },
          isRunning.value ? 'saving…' : 'save',
        ),
        ' ',
        h(
          'span',
          { 'data-testid': 'save-state', class: 'muted' },
          saved === undefined
            ? state.value
            : `saved version ${saved.version} (${saved.length} chars)`,
        ),
      ])
    }
  },
})
