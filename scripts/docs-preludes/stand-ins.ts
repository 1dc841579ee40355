// prelude=stand-ins: the application a sample calls into. Each function does
// a little asynchronous work (one timer turn) and settles; none holds the
// process.
const later = <T>(value: T): Promise<T> =>
  new Promise((resolve) => setTimeout(() => resolve(value), 1))

const id = 7
const orderId = 'order-7'
const key = 'search'
const doc = { id, body: 'hello' }
const log = {
  error: (fields: object) => console.error(fields),
  info: (fields: object) => console.log(fields),
}
class HttpError extends Error {
  constructor(readonly status: number) {
    super(`HTTP ${status}`)
  }
}

const fetchUser = () => later({ id, name: 'Ada' })
const loadUser = fetchUser
const loadPrefs = () => later({ theme: 'dark' })
const render = (user: { name: string }, prefs: { theme: string }) => `${user.name} (${prefs.theme})`
const fetchA = () => later('a')
const fetchB = () => later('b')
const merge = <A, B>(a: A, b: B) => [a, b] as const
const fetchDoc = () => later(doc)
const fetchResults = () => later(['result'])
const query = fetchResults
const saveDoc = () => later(true)
const saveDraft = () => later(true)
const postForm = () => later(true)
const work = () => later('done')
const handleCommand = () => later('handled')
const isReady = () => true
const db = { write: (_doc: object, fence: number) => later(fence) }
const apply = (command: { step: number }, _signal: AbortSignal) => later(command.step)
const commandStream = (async function* () {
  const aggregateId = { contextName: 'sales', aggregateName: 'Order', id: orderId }
  for (const step of [1, 2, 3]) yield { aggregateId, step }
})()
