import type {
  Attributes,
  Histogram,
  Meter,
  ObservableResult,
  ObservableUpDownCounter,
} from '@opentelemetry/api'
import { counts, type Runtime } from '@vega/job-core'
import { ATTR, type TaskResult } from './names.js'

// Seconds, from a microtask to a long batch job: the semantic conventions'
// duration buckets, stretched to ten minutes.
const DURATION_BUCKETS = [
  0.001, 0.005, 0.01, 0.025, 0.05, 0.075, 0.1, 0.25, 0.5, 0.75, 1, 2.5, 5, 7.5, 10, 30, 60, 300,
  600,
]
const ATTEMPT_BUCKETS = [0, 1, 2, 3, 4, 5, 10]

/** What one finished task reports to the histograms. */
export interface FinishedTask {
  /** `vega.job.runtime` and, for a labelled task, `vega.job.label`: never the key. */
  readonly attributes: Attributes
  readonly result: TaskResult
  /** `run()` to terminal, ms on the runtime clock. */
  readonly durationMs: number
  /** Summed time queued or parked, ms on the runtime clock. */
  readonly waitMs: number
  readonly attempts: number
}

/** The four instruments of otel.md §4 for one runtime. */
export class TaskMetrics {
  private readonly duration: Histogram
  private readonly wait: Histogram
  private readonly attempts: Histogram
  private readonly live: ObservableUpDownCounter
  private readonly observeLive: (result: ObservableResult) => void
  private observing = true

  constructor(meter: Meter, runtime: Runtime) {
    this.duration = meter.createHistogram('vega.job.duration', {
      description: 'Time from run() to the terminal state of a task.',
      unit: 's',
      advice: { explicitBucketBoundaries: DURATION_BUCKETS },
    })
    this.wait = meter.createHistogram('vega.job.wait.duration', {
      description: 'Time a task spent queued or parked (shaper, coordinator, dependencies, retry).',
      unit: 's',
      advice: { explicitBucketBoundaries: DURATION_BUCKETS },
    })
    this.attempts = meter.createHistogram('vega.job.attempts', {
      description: 'Attempts a task made before its terminal state.',
      unit: '{attempt}',
      advice: { explicitBucketBoundaries: ATTEMPT_BUCKETS },
    })
    this.live = meter.createObservableUpDownCounter('vega.job.tasks', {
      description: 'Live tasks by state, read from the runtime counters.',
      unit: '{task}',
    })
    const queued = { [ATTR.runtime]: runtime.name, [ATTR.state]: 'queued' }
    const parked = { [ATTR.runtime]: runtime.name, [ATTR.state]: 'parked' }
    const running = { [ATTR.runtime]: runtime.name, [ATTR.state]: 'running' }
    this.observeLive = (result) => {
      const now = counts(runtime)
      result.observe(now.queued, queued)
      result.observe(now.parked, parked)
      // Bodies of tasks that already ended are no live task.
      result.observe(now.running - now.exiting, running)
    }
    this.live.addCallback(this.observeLive)
  }

  record(task: FinishedTask): void {
    this.duration.record(task.durationMs / 1000, { ...task.attributes, [ATTR.result]: task.result })
    this.wait.record(task.waitMs / 1000, task.attributes)
    this.attempts.record(task.attempts, task.attributes)
  }

  /** Stops observing the runtime's counters; histograms still take what `record` gets. */
  stopObserving(): void {
    if (!this.observing) return
    this.observing = false
    this.live.removeCallback(this.observeLive)
  }
}
