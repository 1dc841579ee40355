import { type PostgresServer, startPostgresServer } from '@vega/postgres-server'

/** A Postgres of the test file's own. */
export function startPostgres(): Promise<PostgresServer> {
  return startPostgresServer({ who: '@vega/job-postgres tests', folderPrefix: 'vega-job-pg-' })
}

export type { PostgresServer }
