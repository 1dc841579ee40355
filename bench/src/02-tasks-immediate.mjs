// Scenario 2: as scenario 1, but each body awaits one setImmediate, so bodies
// overlap and the limit of 16 is really reached.

import { taskPeers, verifyTasks } from './01-tasks.mjs'

const immediate = () => new Promise((resolve) => setImmediate(resolve))

export default {
  id: 'tasks-immediate',
  title: 'tasks awaiting one setImmediate, concurrency 16, run() + await all',
  size: { full: 200_000, quick: 20_000 },
  target: '≤ 1.3× the lower bound',
  peers: taskPeers((i, counters) => async () => {
    counters.bodies++
    if (++counters.active > counters.maxActive) counters.maxActive = counters.active
    await immediate()
    counters.active--
    return i
  }),
  // 16 at once proves that the limit was used, not just respected.
  verify: (peer, result, n) => verifyTasks(peer, result, n, { minActive: 16 }),
  checks: [
    { label: 'job-core ≤ 1.3× hand semaphore', subject: 'job-core', kind: 'ratio', max: 1.3 },
    {
      label: 'job-core vs p-limit (info)',
      subject: 'job-core',
      kind: 'relative',
      to: 'p-limit',
    },
    {
      label: 'job-core vs p-queue (info)',
      subject: 'job-core',
      kind: 'relative',
      to: 'p-queue',
    },
  ],
}
