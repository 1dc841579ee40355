// One process of the concurrent-start test: connects, says it is ready, and
// runs migrate when told, so eight of them run it in the same moment.
import { migrate } from '@vega/job-postgres'
import pg from 'pg'

const [url, schema] = process.argv.slice(2)
const pool = new pg.Pool({ connectionString: url, max: 2 })
await pool.query('SELECT 1')
process.send({ t: 'ready' })
process.once('message', async () => {
  try {
    const report = await migrate(pool, { schema })
    process.send({ t: 'done', ...report })
  } catch (error) {
    process.send({ t: 'error', error: String(error?.stack ?? error) })
  } finally {
    await pool.end()
    process.disconnect()
  }
})
