import { getEventBus, type TaskContext } from '@vega/job-core'
import { runtime } from './runtime.js'

// The app's "server", in memory so the example runs offline. Each call waits
// the network's latency with ctx.sleep, so a cancelled call stops at once,
// as a fetch(url, { signal: ctx.signal }) would. `?latency=ms` in the page's
// URL sets the latency (default 400 ms).

export interface Doc {
  readonly id: number
  readonly title: string
  readonly body: string
}

export interface Saved {
  readonly length: number
  readonly version: number
}

const DOCS: readonly Doc[] = [
  'Vega, the brightest star in Lyra',
  'Vectors and velocities',
  'Venus in the morning sky',
  'Vesta, the second-largest asteroid',
  'Virgo and its galaxy cluster',
  'Visible light and its spectrum',
  'Voyager 1 leaves the heliosphere',
  'Variable stars and their periods',
  'Lyra, a small constellation',
  'Polaris, the north star',
].map((title, index) => ({ id: index + 1, title, body: `${title}: a short article.` }))

const params = new URLSearchParams(globalThis.location?.search ?? '')
const LATENCY = Number(params.get('latency') ?? 400)

let saved = 0

/** Every request shows in the footer, through the runtime's event bus. */
function request(kind: 'search' | 'search-answered' | 'doc' | 'save'): void {
  getEventBus(runtime).emit({ type: 'api:request', kind })
}

/** The ids of the documents whose title has a word starting with `query`. */
export async function searchDocs(ctx: TaskContext, query: string): Promise<number[]> {
  request('search')
  await ctx.sleep(LATENCY)
  request('search-answered')
  const q = query.trim().toLowerCase()
  if (q === '') return []
  return DOCS.filter((doc) =>
    doc.title
      .toLowerCase()
      .split(/\W+/)
      .some((word) => word.startsWith(q)),
  ).map((doc) => doc.id)
}

export async function loadDoc(ctx: TaskContext, id: number): Promise<Doc> {
  request('doc')
  await ctx.sleep(LATENCY)
  const doc = DOCS.find((d) => d.id === id)
  if (doc === undefined) throw new Error(`no document ${id}`)
  return doc
}

export async function saveDraft(ctx: TaskContext, text: string): Promise<Saved> {
  request('save')
  await ctx.sleep(LATENCY)
  return { length: text.length, version: ++saved }
}
