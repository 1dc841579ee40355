import type { WakeListener, WakeMessage } from '@vega/job-distributed'
import type { RedisClient } from './redis-io.js'
import { ShardedSubscriber } from './sharded-subscriber.js'

/** One key's wake-up channel while this process listens to it. */
interface Listening {
  readonly channel: string
  /** Waiters and restart holders of the key that need its messages. */
  wanted: number
  /** Set while nobody wants it: the subscription stays a little, for the key's next waiter. */
  linger: NodeJS.Timeout | undefined
}

/**
 * The coordination's wake-ups on Redis: one sharded subscriber connection
 * (opened once, beside the user's client), and a channel per key this
 * process waits on, subscribed while wanted and kept a lease period after.
 * Each message is read into a `WakeMessage` for the engine-neutral waiters.
 */
export class KeyChannels {
  private subscriber: ShardedSubscriber | undefined
  private listener: WakeListener | undefined
  /** The keys whose channel this process listens to, by hash; and the hash of each channel. */
  private readonly listening: Map<string, Listening> = new Map()
  private readonly channels: Map<string, string> = new Map()

  constructor(
    private readonly redis: RedisClient,
    private readonly channelOf: (hash: string) => string,
    private readonly lingerMs: number,
  ) {}

  /**
   * Opens the subscriber connection (once). On a cluster it is a duplicate
   * with one sharded subscriber per primary, so a key's channel is heard on
   * the primary that owns the key's slot. It subscribes to nothing until a
   * key is waited on ({@link want}).
   */
  open(listener: WakeListener): void {
    this.listener ??= listener
    if (this.subscriber !== undefined || this.redis.status === 'end') return
    this.subscriber = new ShardedSubscriber(this.redis, (channel, message) =>
      this.hear(channel, message),
    )
  }

  /**
   * Listens to the key's channel. The key's waiters re-check each time the
   * subscription holds (first, and after a reconnect re-subscribed it): a
   * message sent before it did is not heard, and the re-check finds what it
   * said.
   */
  want(hash: string): void {
    const known = this.listening.get(hash)
    if (known !== undefined) {
      known.wanted++
      if (known.linger !== undefined) clearTimeout(known.linger)
      known.linger = undefined
      return
    }
    if (this.listener !== undefined) this.open(this.listener)
    const subscriber = this.subscriber
    if (subscriber === undefined) return // the client ended: waiters fail or poll on their floor
    const listening: Listening = { channel: this.channelOf(hash), wanted: 1, linger: undefined }
    this.listening.set(hash, listening)
    this.channels.set(listening.channel, hash)
    const subscribed = () => {
      if (this.listening.get(hash) === listening) this.listener?.recheck(hash)
    }
    // Not subscribed: the key's next waiter tries again; until then its waiters poll on their floor.
    const failed = () => this.forget(hash, listening)
    subscriber.subscribe(listening.channel, subscribed, failed)
  }

  unwant(hash: string): void {
    const listening = this.listening.get(hash)
    if (listening === undefined || --listening.wanted > 0) return
    // Kept for a lease period: a key waited on again soon costs no new subscription.
    listening.linger = setTimeout(() => this.stopListening(hash, listening), this.lingerMs)
    listening.linger.unref()
  }

  close(): void {
    for (const listening of this.listening.values()) {
      if (listening.linger !== undefined) clearTimeout(listening.linger)
    }
    this.listening.clear()
    this.channels.clear()
    const subscriber = this.subscriber
    this.subscriber = undefined
    subscriber?.close()
  }

  private stopListening(hash: string, listening: Listening): void {
    if (this.forget(hash, listening)) this.subscriber?.unsubscribe(listening.channel)
  }

  private forget(hash: string, listening: Listening): boolean {
    if (this.listening.get(hash) !== listening) return false
    if (listening.linger !== undefined) clearTimeout(listening.linger)
    this.listening.delete(hash)
    this.channels.delete(listening.channel)
    return true
  }

  private hear(channel: string, message: string): void {
    const hash = this.channels.get(channel)
    if (hash === undefined || this.listener === undefined) return
    this.listener.hear(hash, parse(message))
  }
}

/**
 * A message on a key's channel (see the scripts): `g` hand-off, `w` wake,
 * `x` evicted, `s` superseded, `r` dedupe result (its payload, which may
 * contain line breaks, is the rest of the message).
 */
function parse(message: string): WakeMessage {
  const kind = message[0]
  if (kind === 'r') {
    const [, leader = '', payload = ''] = splitN(message, 3)
    return { kind: 'result', leader, payload }
  }
  const lines = message.split('\n')
  if (kind === 'g') {
    const [, id = '', fence = '', server = ''] = lines
    return { kind: 'handed', id, fence: Number(fence), server }
  }
  if (kind === 'x') return { kind: 'evicted', ids: lines.slice(1) }
  if (kind === 's') return { kind: 'superseded', ids: lines.slice(1) }
  return { kind: 'wake', head: lines[1] }
}

/** Splits on the first n - 1 newlines: the last part (a payload) may contain any. */
function splitN(text: string, n: number): string[] {
  const parts: string[] = []
  let from = 0
  while (parts.length < n - 1) {
    const at = text.indexOf('\n', from)
    if (at === -1) break
    parts.push(text.slice(from, at))
    from = at + 1
  }
  parts.push(text.slice(from))
  return parts
}
