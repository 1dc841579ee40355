import { createHash } from 'node:crypto'
import type { Cluster } from 'ioredis'
import type { RedisClient } from './redis-io.js'

// The package's one way to send a Lua script (the coordination's and the
// aggregate bus's): one loader, one NOSCRIPT fallback. Each family of
// scripts is loaded on the clients that use it, so a coordination's client
// never loads the bus's scripts, nor the other way round.

/** A family of scripts loaded together, before a client's first call of any of them. */
export class ScriptFamily {
  private readonly scripts: LuaScript[] = []
  private readonly loadedOn = new WeakSet<RedisClient>()

  /** A script of this family. */
  script(source: string): LuaScript {
    const script = new LuaScript(source, this)
    this.scripts.push(script)
    return script
  }

  /**
   * Sends SCRIPT LOAD for every script of the family before a client's first
   * call. One connection keeps commands in order, so the EVALSHAs behind them
   * always find their script: a NOSCRIPT fallback (EVAL, issued later) would
   * let a later command overtake an earlier one, e.g. a call's acquire
   * overtaking the release of the call before it. A cluster client loads them
   * on every primary, once its slots are known and when a node joins.
   */
  preload(redis: RedisClient): void {
    if (this.loadedOn.has(redis)) return
    this.loadedOn.add(redis)
    if (redis.isCluster) {
      const cluster = redis as Cluster
      const loadAll = () => {
        for (const node of cluster.nodes('master')) {
          for (const script of this.scripts) node.script('LOAD', script.source).catch(() => {})
        }
      }
      if (cluster.status === 'ready') loadAll()
      cluster.on('ready', loadAll)
      cluster.on('+node', loadAll)
      return
    }
    for (const script of this.scripts) {
      redis.script('LOAD', script.source).catch(() => this.loadedOn.delete(redis))
    }
  }

  /** A restarted primary forgot the scripts: load them all again before the client's next call. */
  forget(redis: RedisClient): void {
    // A cluster client loads them on every primary as it learns of it (see preload).
    if (!redis.isCluster) this.loadedOn.delete(redis)
  }
}

/** A Lua script sent by SHA (EVALSHA); loaded with its family, and again after a restart emptied the script cache. */
export class LuaScript {
  readonly sha: string

  constructor(
    readonly source: string,
    private readonly family: ScriptFamily,
  ) {
    this.sha = createHash('sha1').update(source).digest('hex')
  }

  /**
   * Sends the script by SHA and hands its reply to `parse`, all in one
   * continuation (the coordination runs this twice per call: a promise layer
   * less is time).
   */
  run<T>(
    redis: RedisClient,
    keys: number,
    args: readonly (string | number)[],
    parse: (reply: unknown) => T | PromiseLike<T>,
    onError?: (error: unknown) => never,
  ): Promise<T> {
    this.family.preload(redis)
    return redis.evalsha(this.sha, keys, ...args).then(parse, (error: unknown) => {
      if (!(error instanceof Error) || !error.message.startsWith('NOSCRIPT')) {
        if (onError === undefined) throw error
        return onError(error)
      }
      this.family.forget(redis)
      return redis.eval(this.source, keys, ...args).then(parse, onError)
    })
  }
}
