/**
 * The part of a node-postgres (`pg`) `Pool` this package uses: `query` for
 * its statements, and `options` / `Client` to open its one LISTEN
 * connection with the same settings. Any `new Pool(…)` of `pg` 8 fits.
 *
 * @example
 * ```ts
 * import pg from 'pg'
 * const pool: PostgresPool = new pg.Pool({ connectionString: process.env.DATABASE_URL })
 * ```
 */
export interface PostgresPool {
  // biome-ignore lint/suspicious/noExplicitAny: pg's own signature; rows are read by name
  query(text: string, values?: any[]): Promise<{ rows: any[]; rowCount: number | null }>
  readonly options?: object
}
