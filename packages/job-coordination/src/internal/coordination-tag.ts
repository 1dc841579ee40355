import { createTaskTag, type TaskTag } from '@vega/job-core'
import type { Coordinator } from '../types.js'

/** What `withCoordinator` attaches to a taskFn. */
export interface CoordinationBinding {
  readonly coordinator: Coordinator
  readonly hash: string
}

/**
 * The tag `installCoordination` claims. Its plugin name is what the kernel's
 * loud-fail guard prints when the plugin is missing, so it must be the name
 * of the exported plugin value.
 */
export const coordinationTag: TaskTag<CoordinationBinding> = createTaskTag<CoordinationBinding>(
  'installCoordination',
  { key: (binding) => binding.hash },
)
