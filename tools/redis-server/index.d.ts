/** A real redis-server owned by its starter: its own port, its own folder, no persistence. */
export interface RedisServer {
  readonly port: number
  /** `redis://127.0.0.1:<port>` */
  readonly url: string
  /** Its working folder (removed by `dispose` and `killNow`). */
  readonly dir: string
  /** Stops it (SIGTERM) and waits for the exit. */
  stop(): Promise<void>
  /** Starts it again on the same port, empty (a new run_id). */
  start(): Promise<void>
  /** Stops it and removes its folder. */
  dispose(): Promise<void>
  /** SIGKILL and remove the folder, synchronously: for a process `exit` handler. */
  killNow(): void
}

export interface StartRedisServerOptions {
  /** Who needs it, for the error when redis-server is missing. */
  readonly who?: string
  /** Appended to that error, e.g. `(or pass --redis <url>)`. */
  readonly alternative?: string
  /** Prefix of the temporary folder. */
  readonly folderPrefix?: string
  /** Do not keep the starting process alive for the server (bench, examples). */
  readonly unref?: boolean
}

/** Starts a redis-server and resolves once it accepts connections. */
export function startRedisServer(options?: StartRedisServerOptions): Promise<RedisServer>

/** Throws, with the one command to run, when no redis-server is on PATH. */
export function requireRedisServer(who?: string, alternative?: string): void

/** A loopback port nobody listens on right now. */
export function freePort(): Promise<number>
