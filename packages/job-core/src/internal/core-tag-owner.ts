/** The owner name on core's own tags (shapers): they need no plugin. */
export const CORE_TAG_OWNER = '@vega/job-core'
