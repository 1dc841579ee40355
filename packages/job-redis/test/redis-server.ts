// The tests' redis-server comes from the repository's one starter (tools/redis-server).
import { type RedisServer, startRedisServer as start } from '@vega/redis-server'

export type { RedisServer }

/** A real redis-server owned by one test file: its own port, its own folder, no persistence. */
export function startRedisServer(): Promise<RedisServer> {
  return start({
    who: '@vega/job-redis tests',
    alternative: '(.ci/run does it for you), then run the tests again',
    folderPrefix: 'vega-job-redis-',
  })
}
