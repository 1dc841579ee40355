// One process of the multi-process tests: a pg Pool of its own and the BUILT
// package (dist), served by the engine-neutral worker (@vega/distributed-tests).

import { serveWorker } from '@vega/distributed-tests/worker-child'
import { assertLease, createPostgresCoordination, fencingToken } from '../../dist/index.js'

serveWorker({
  async connect({ url, schema, leaseMs, connectTimeoutMs, poolMax, pg: module }) {
    // The pg the parent names: 'pg' (the newest 8.x) or an alias of the oldest in the peer range, 'pg-8-0'.
    const { default: pg } = await import(module ?? 'pg')
    const pool = new pg.Pool({
      connectionString: url,
      max: poolMax ?? 4,
      // Its backends (the pool's and the LISTEN connection) are found by this name.
      application_name: `vega-worker-${process.pid}`,
    })
    pool.on('error', () => {})
    return {
      coordination: createPostgresCoordination({ pool, schema, leaseMs, connectTimeoutMs }),
      fencingToken,
      assertLease,
      ping: () => pool.query('SELECT 1'),
      close: () => pool.end(),
    }
  },
})
