/** How a stop ends the server's sessions: `fast` rolls them back and checkpoints; `immediate` is a crash (recovery at the next start). */
export type PostgresStopMode = 'smart' | 'fast' | 'immediate'

/** A real Postgres cluster owned by its starter: its own port, its own folder, fsync off. */
export interface PostgresServer {
  readonly port: number
  /** `postgres://postgres@127.0.0.1:<port>/postgres` (trust authentication on loopback). */
  readonly url: string
  /** Its folder: `data/`, `postgres.log` and the unix socket (removed by `dispose` and `killNow`). */
  readonly dir: string
  /** Stops it (`pg_ctl stop -m fast` unless told) and waits until it is down. */
  stop(options?: { readonly mode?: PostgresStopMode }): Promise<void>
  /** Starts it again on the same port, with its data. */
  start(): Promise<void>
  /** Stops (`fast` unless told; `immediate` for a crash) and starts again: same port, same data. */
  restart(options?: { readonly mode?: PostgresStopMode }): Promise<void>
  /** Stops it and removes its folder. */
  dispose(): Promise<void>
  /** An immediate stop and the folder removed, synchronously: for a process `exit` handler. */
  killNow(): void
}

export interface StartPostgresServerOptions {
  /** Who needs it, for the error when Postgres is missing. */
  readonly who?: string
  /** Appended to that error, e.g. `(or pass --postgres <url>)`. */
  readonly alternative?: string
  /** Prefix of the temporary folder. */
  readonly folderPrefix?: string
  /** More server settings (`-c name=value`), over the defaults (fsync off, max_connections 200, …). */
  readonly settings?: Readonly<Record<string, string>>
}

/** Initialises a cluster in a temporary folder, starts it on a free loopback port and resolves once it accepts connections. */
export function startPostgresServer(options?: StartPostgresServerOptions): Promise<PostgresServer>

/** The bin folder of the newest Debian postgresql ≥ 14, or undefined. */
export function postgresBinDir(): string | undefined

/** Throws, with the one command to run, when no Postgres ≥ 14 is installed; returns its bin folder. */
export function requirePostgres(who?: string, alternative?: string): string

/** A loopback port nobody listens on right now. */
export function freePort(): Promise<number>
