import { installPerformanceTracks, mountDevtools } from '@vega/job-devtools'
import { runtime } from './runtime.js'

// The devtools panel on the app's runtime: Ctrl+Shift+F opens it. It records
// from the start (`record: 'always'`), so opening it shows the searches that
// already ran; its UI code loads on the first open. In a production build
// vite.config.ts aliases `@vega/job-devtools` to its `/production` entry, whose
// `mountDevtools` and `installPerformanceTracks` do nothing: no element, no
// listener, no UI bytes, no track entries.
// Mounted once, next to the runtime, outside React: StrictMode's double mount
// never reaches it.
export const devtools = mountDevtools({ source: runtime, hotkey: 'Ctrl+Shift+F' })

// The runtime's tasks in Chrome's Performance panel: record a profile and
// they are in the `react-search` track group, a track per coordination key.
installPerformanceTracks(runtime)
