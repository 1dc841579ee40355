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
// Labels are meant to be few, but one with an id in it must not grow a cache forever.
const CACHED_LABELS = 256

/** The attributes of one label's data points, built once per label and result. */
class LabelAttributes {
  readonly byResult = new Map<TaskResult, Attributes>()
  constructor(readonly base: Attributes) {}

  withResult(result: TaskResult): Attributes {
    let attributes = this.byResult.get(result)
    if (attributes === undefined) {
      attributes = { ...this.base, [ATTR.result]: result }
      this.byResult.set(result, attributes)
    }
    return attributes
  }
}

/** The four instruments of the package README's Metrics section, for one runtime. */
export class TaskMetrics {
  private readonly duration: Histogram
  private readonly wait: Histogram
  private readonly attempts: Histogram
  private readonly live: ObservableUpDownCounter
  private readonly observeLive: (result: ObservableResult) => void
  private readonly runtimeName: string
  private observing = true
  /** Per label, `undefined` for none; the first CACHED_LABELS labels only. */
  private readonly labels = new Map<string | undefined, LabelAttributes>()

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
    this.runtimeName = runtime.name
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

  /**
   * One finished task: `durationMs` from `run()` to terminal and `waitMs`
   * queued or parked, both on the runtime clock; `vega.job.runtime` and the
   * label as attributes, never the key.
   */
  record(
    label: string | undefined,
    result: TaskResult,
    durationMs: number,
    waitMs: number,
    attempts: number,
  ): void {
    const attributes = this.attributesOf(label)
    this.duration.record(durationMs / 1000, attributes.withResult(result))
    this.wait.record(waitMs / 1000, attributes.base)
    this.attempts.record(attempts, attributes.base)
  }

  private attributesOf(label: string | undefined): LabelAttributes {
    let attributes = this.labels.get(label)
    if (attributes === undefined) {
      attributes = new LabelAttributes(
        label === undefined
          ? { [ATTR.runtime]: this.runtimeName }
          : { [ATTR.runtime]: this.runtimeName, [ATTR.label]: label },
      )
      if (this.labels.size < CACHED_LABELS) this.labels.set(label, attributes)
    }
    return attributes
  }

  /** Stops observing the runtime's counters; histograms still take what `record` gets. */
  stopObserving(): void {
    if (!this.observing) return
    this.observing = false
    this.live.removeCallback(this.observeLive)
  }
}
