import type { Cluster } from 'ioredis'
import type { RedisClient } from './redis-io.js'

/**
 * Opens a connection for sharded pub/sub (`SSUBSCRIBE`, Redis 7) beside
 * `redis`: on a cluster a duplicate with ioredis's `shardedSubscribers`, one
 * subscriber per primary, so a channel is heard on the primary that owns its
 * slot; on one primary a plain duplicate. It subscribes to nothing by itself,
 * hands every message to `heard`, swallows its errors (a missed message costs
 * its listener one polling period) and never keeps the process alive.
 */
export function openShardedSubscriber(
  redis: RedisClient,
  heard: (channel: string, message: string) => void,
): RedisClient {
  const subscriber = redis.isCluster
    ? (redis as Cluster).duplicate([], { shardedSubscribers: true })
    : redis.duplicate()
  subscriber.on('error', () => {})
  subscriber.on('connect', () => (subscriber as { stream?: { unref?(): void } }).stream?.unref?.())
  subscriber.on('smessage', heard)
  return subscriber
}

/**
 * `SSUBSCRIBE`s `channel` on `subscriber`: `held` once the subscription
 * holds, `failed` if it cannot be made, whether the command rejects or
 * throws (a cluster client that does not know the slot's node yet throws).
 */
export function subscribeSharded(
  subscriber: RedisClient,
  channel: string,
  held: () => void,
  failed: () => void,
): void {
  try {
    subscriber.ssubscribe(channel).then(held, failed)
  } catch {
    failed()
  }
}
