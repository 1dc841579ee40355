import { createTaskTag } from '../task-tag.js'
import type { TaskTag } from '../types/plugin.js'
import type { Shaper } from '../types/shaper.js'
import { CORE_TAG_OWNER } from './core-tag-owner.js'

export interface ShaperBinding {
  readonly shaper: Shaper
  readonly hash: string
}

/** Core's own tag; claimed by no plugin, handled in the shaping stage. */
export const shaperTag: TaskTag<ShaperBinding> = createTaskTag<ShaperBinding>(CORE_TAG_OWNER, {
  key: (binding) => binding.hash,
})
