import { createHash } from 'node:crypto'
import type { Cluster } from 'ioredis'
import type { RedisClient } from './redis-io.js'

// Every script of the package (the coordination's and the aggregate bus's):
// one loader, one NOSCRIPT fallback.

/** Every script made, in the order made: a client loads them all before its first call. */
const everyScript: LuaScript[] = []

/** A Lua script sent by SHA (EVALSHA); loaded before a client's first call, and again after a restart emptied the script cache. */
export class LuaScript {
  readonly sha: string

  constructor(readonly source: string) {
    this.sha = createHash('sha1').update(source).digest('hex')
    everyScript.push(this)
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
    preload(redis)
    return redis.evalsha(this.sha, keys, ...args).then(parse, (error: unknown) => {
      if (!(error instanceof Error) || !error.message.startsWith('NOSCRIPT')) {
        if (onError === undefined) throw error
        return onError(error)
      }
      // A restarted primary forgot them: load them all again, in order, before the next call (a
      // cluster client loads them on every primary as it learns of it), and run this one by EVAL.
      if (!redis.isCluster) loadedOn.delete(redis)
      return redis.eval(this.source, keys, ...args).then(parse, onError)
    })
  }
}

const loadedOn = new WeakSet<RedisClient>()

/**
 * Sends SCRIPT LOAD for every script before a client's first call. One
 * connection keeps commands in order, so the EVALSHAs behind them always
 * find their script: a NOSCRIPT fallback (EVAL, issued later) would let a
 * later command overtake an earlier one, e.g. a call's acquire overtaking
 * the release of the call before it. A cluster client loads them on every
 * primary, once its slots are known and when a node joins.
 */
export function preload(redis: RedisClient): void {
  if (loadedOn.has(redis)) return
  loadedOn.add(redis)
  if (redis.isCluster) {
    const cluster = redis as Cluster
    const loadAll = () => {
      for (const node of cluster.nodes('master')) {
        for (const script of everyScript) node.script('LOAD', script.source).catch(() => {})
      }
    }
    if (cluster.status === 'ready') loadAll()
    cluster.on('ready', loadAll)
    cluster.on('+node', loadAll)
    return
  }
  for (const script of everyScript) {
    redis.script('LOAD', script.source).catch(() => loadedOn.delete(redis))
  }
}
