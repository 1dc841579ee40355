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

/** A Redis Cluster of real `redis-server` processes on loopback ports. */
export interface RedisClusterNodes {
  /** Every node's port (primaries first, as `redis-cli --cluster create` assigns them). */
  readonly ports: readonly number[]
  /** The three primaries as ioredis `Cluster` startup nodes. */
  readonly nodes: readonly { readonly host: string; readonly port: number }[]
  /** The nodes' working folder (removed by `dispose` and `killNow`). */
  readonly dir: string
  /** Stops one node (SIGTERM) and waits for its exit. */
  stop(port: number): Promise<void>
  /** Starts a stopped node again on its port, with its node config: it rejoins empty. */
  start(port: number): Promise<void>
  /** Resolves once every running node reports cluster_state:ok. */
  healthy(): Promise<void>
  /** Stops every node and removes the folder. */
  dispose(): Promise<void>
  /** SIGKILL every node and remove the folder, synchronously: for a process `exit` handler. */
  killNow(): void
}

export interface StartRedisClusterOptions {
  /** 1 gives each of the three primaries a replica (six nodes). */
  readonly replicas?: 0 | 1
  /** Who needs it, for the error when redis-server or redis-cli is missing. */
  readonly who?: string
  /** Do not keep the starting process alive for the nodes (bench). */
  readonly unref?: boolean
}

/** Starts three primaries (and their replicas), joins them, and resolves once the cluster is ok. */
export function startRedisCluster(options?: StartRedisClusterOptions): Promise<RedisClusterNodes>
