import type { Cluster, Redis } from 'ioredis'
import type { RedisClient } from './redis-io.js'

/** One channel's listener: told each time its subscription holds, or that it could not be made. */
interface Subscription {
  readonly held: () => void
  readonly failed: () => void
}

/**
 * A connection for sharded pub/sub (`SSUBSCRIBE`, Redis 7) beside `redis`:
 * on a cluster a duplicate with ioredis's `shardedSubscribers`, one
 * subscriber per primary, so a channel is heard on the primary that owns its
 * slot; on one primary a plain duplicate. It hands every message to `heard`,
 * swallows its errors (a missed message costs its listener one polling
 * period) and never keeps the process alive.
 *
 * It tells each channel's listener every time the channel's subscription
 * holds: first, and again after a reconnect re-subscribed it. Whatever was
 * published in between was not heard, so the listener looks for itself.
 *
 * On one primary it subscribes only on a ready connection, and re-subscribes
 * itself after a reconnect (ioredis's `autoResubscribe` is off on it): an
 * `SSUBSCRIBE` sent while ioredis 5 still runs its connection handshake
 * turns the connection into a subscriber before the handshake's `INFO`, the
 * handshake fails, and ioredis reconnects without the subscription (redis/ioredis
 * #2037, fixed in ioredis 6), while the `SSUBSCRIBE` itself had succeeded.
 * A cluster's sharded subscribers skip that handshake; ioredis re-subscribes
 * them after it replaced one, and says so with `subscribersReady`.
 */
export class ShardedSubscriber {
  private readonly connection: RedisClient
  private readonly subscriptions: Map<string, Subscription> = new Map()

  constructor(redis: RedisClient, heard: (channel: string, message: string) => void) {
    const connection = redis.isCluster
      ? (redis as Cluster).duplicate([], { shardedSubscribers: true })
      : (redis as Redis).duplicate({ autoResubscribe: false })
    this.connection = connection
    connection.on('error', () => {})
    connection.on('connect', () =>
      (connection as { stream?: { unref?(): void } }).stream?.unref?.(),
    )
    connection.on('smessage', heard)
    if (redis.isCluster) {
      // ioredis sent the SSUBSCRIBEs of the replaced subscriber on its new connection just before.
      connection.on('subscribersReady', () => {
        for (const subscription of [...this.subscriptions.values()]) subscription.held()
      })
    } else {
      connection.on('ready', () => {
        for (const channel of [...this.subscriptions.keys()]) this.send(channel)
      })
    }
  }

  /**
   * Subscribes to `channel`: `held` each time the subscription holds, `failed`
   * (once, and the channel is forgotten) if it cannot be made, whether the
   * command rejects or throws (a cluster client that does not know the slot's
   * node yet throws).
   */
  subscribe(channel: string, held: () => void, failed: () => void): void {
    this.subscriptions.set(channel, { held, failed })
    if (this.connection.isCluster || this.connection.status === 'ready') this.send(channel)
    // Otherwise the connection's 'ready' sends it.
  }

  unsubscribe(channel: string): void {
    if (!this.subscriptions.delete(channel)) return
    this.connection.sunsubscribe(channel).catch(() => {})
  }

  close(): void {
    this.subscriptions.clear()
    this.connection.disconnect()
  }

  private send(channel: string): void {
    const failed = () => {
      const subscription = this.subscriptions.get(channel)
      if (subscription === undefined) return
      this.subscriptions.delete(channel)
      subscription.failed()
    }
    try {
      this.connection
        .ssubscribe(channel)
        .then(() => this.subscriptions.get(channel)?.held(), failed)
    } catch {
      failed()
    }
  }
}
