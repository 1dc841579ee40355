import { installPerformanceTracks } from '@vega/job-devtools'
import { runtime } from './runtime.js'

// The app's tasks in Chrome's Performance panel: record a profile while you
// type, and the "vue-search" track group shows each search, document and
// save, with their waits and attempts. In a production build vite.config.ts
// aliases `@vega/job-devtools` to its `/production` entry, where this does nothing.
export const uninstallTracks = installPerformanceTracks(runtime)
