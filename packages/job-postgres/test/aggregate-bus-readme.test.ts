// The README's bus walkthrough is a real program (see
// @vega/distributed-tests/walkthrough), run against this file's own Postgres.
import { describeBusWalkthrough } from '@vega/distributed-tests/walkthrough'
import { afterAll, beforeAll } from 'vitest'
import { uniqueSchema } from './bus-support.js'
import { type PostgresServer, startPostgres } from './postgres.js'

let server: PostgresServer
beforeAll(async () => {
  server = await startPostgres()
})
afterAll(async () => {
  await server?.dispose()
})

describeBusWalkthrough({
  readme: new URL('../README.md', import.meta.url),
  dir: new URL('./.readme-examples/', import.meta.url),
  env: () => ({ POSTGRES_URL: server.url, SCHEMA: uniqueSchema() }),
})
