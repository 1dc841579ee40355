// The local strategies' facts with every call in one process, on Postgres:
// bodies, task states, promises and events as the local strategies give them.

import { describeFactsInOneProcess } from '@vega/distributed-tests'
import { shutdown } from '@vega/job-core'
import { expect } from 'vitest'
import { rows, type Setup, setup, usePostgres } from './support.js'

const pg = usePostgres()

describeFactsInOneProcess({
  engine: 'Postgres',
  fresh: () => setup(pg.url),
  async noHoldersLeft(s: Setup) {
    // Shutdown waits for the releases.
    await shutdown(s.runtime)
    expect(await rows(s.pool, `SELECT holder FROM "${s.schema}".holders`)).toEqual([])
    expect(await rows(s.pool, `SELECT waiter FROM "${s.schema}".waiters`)).toEqual([])
    // busy back at 0: the next call on the key takes the uncontended path.
    expect(await rows(s.pool, `SELECT key, busy FROM "${s.schema}".fences`)).toEqual([
      { key: '"k"', busy: 0 },
    ])
    expect(s.coordination.inspect()).toEqual({ waiters: 0, leases: 0, keys: 0 })
  },
})
