// Search-as-you-type on a real runtime (system clock, real timers):
//   withCoordinator(withShaper(search, debounce(300), { key }), restartCoordinator, { key })
// The debounce squashes a burst of keystrokes into its last one; the restart
// coordinator cancels a request that is still in flight when a newer one starts.
import {
  createRuntime,
  debounce,
  installCoordination,
  isCancelledError,
  restartCoordinator,
  run,
  subscribe,
  withCoordinator,
  withShaper,
} from '@vega/job'

const WORDS = ['vega', 'vegan', 'vegetable', 'vega job', 'vega jobs', 'vega jolt', 'velvet']
const SEARCH_MS = 600

/** A fake search backend that honours its AbortSignal, like fetch does. */
function searchApi(query, signal) {
  return new Promise((resolve, reject) => {
    const timer = setTimeout(
      () => resolve(WORDS.filter((word) => word.startsWith(query))),
      SEARCH_MS,
    )
    signal.addEventListener(
      'abort',
      () => {
        clearTimeout(timer)
        reject(signal.reason)
      },
      { once: true },
    )
  })
}

const runtime = createRuntime({ name: 'search-box', plugins: [installCoordination] })
const key = ['search-box', 'main']
const typing = debounce(300) // one shaper for the box: its window is per key
const bodiesRan = []

const search = (query) =>
  withCoordinator(
    withShaper(
      async (ctx) => {
        bodiesRan.push(query)
        console.log(`           → request for "${query}" sent (task #${ctx.taskId})`)
        const results = await searchApi(query, ctx.signal)
        console.log(`           ← results for "${query}" arrived`)
        return results
      },
      typing,
      { key },
    ),
    restartCoordinator,
    { key },
  )

subscribe(runtime, (event) => {
  if (event.type === 'coordination:restart') {
    console.log(
      `           ✕ ${event.coordinator}: task #${event.intentId} cancels #${event.cancelledPeerIds.join(', #')}`,
    )
  }
})

// [ms after start, what the input box contains]
const keystrokes = [
  [0, 'v'],
  [80, 've'],
  [160, 'veg'],
  [240, 'vega'], // pause: "vega" is searched at 540 ms and answers at 1140 ms
  [1300, 'vega j'],
  [1380, 'vega jo'], // pause: "vega jo" is searched at 1680 ms…
  [1800, 'vega job'], // …and is still in flight when "vega job" is searched at 2100 ms
]

console.log('Typing into a search box: debounce(300) + restartCoordinator, one key for the box\n')
const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms))
const start = Date.now()
const calls = []
for (const [at, query] of keystrokes) {
  await sleep(Math.max(0, at - (Date.now() - start)))
  console.log(`${String(at).padStart(6)} ms ⌨  "${query}"`)
  const task = run(runtime, search(query), { label: query })
  calls.push({
    query,
    task,
    got: task.then(
      (results) => `${results.length} results: ${results.join(', ')}`,
      (error) => (isCancelledError(error) ? `CancelledError (${error.reason})` : String(error)),
    ),
  })
}

const summaries = await Promise.all(calls.map((call) => call.got))
console.log('\nEvery call, and what its caller got:')
for (const [index, { query, task }] of calls.entries()) {
  const how =
    task.state === 'cancelled'
      ? `cancelled (${task.cancelReason}${task.cancelledBy === undefined ? '' : ` by #${task.cancelledBy}`})`
      : task.state
  console.log(`  #${task.id} ${`"${query}"`.padEnd(11)} ${how.padEnd(28)} got ${summaries[index]}`)
}
console.log(`\nBodies that ran: ${bodiesRan.map((query) => `"${query}"`).join(', ')}`)
console.log(
  'Superseded keystrokes settle with their survivor’s outcome; a restarted request rejects with abort.',
)
