import { assertKnownKeys } from '../assert-known-keys.js'
import type { RunOptions } from '../types/task.js'
import type {
  ResolvedDefaults,
  ResolvedRunOptions,
  RuntimeCore,
  TaskRecord,
  Timeouts,
} from './model.js'
import { recordOf } from './record-of.js'
import { resolveRetry } from './retry.js'
import { describeValue, nestedOptionName, type OptionName, validateMs } from './validate.js'

const NO_OPTIONS: RunOptions = Object.freeze({})

const RUN_OPTION_KEYS: readonly (keyof RunOptions)[] = [
  'label',
  'signal',
  'dependsOn',
  'priority',
  'timeout',
  'retry',
]

/**
 * Checks the options of `run()` or `ctx.run()` (`fn` names the call in
 * errors) and resolves them for `core`: every field is checked here, once.
 */
export function resolveRunOptions(
  core: RuntimeCore,
  options: RunOptions | undefined,
  fn: 'run' | 'ctx.run',
): ResolvedRunOptions {
  if (options === undefined) return core.defaultRunOptions
  const call = fn === 'run' ? 'run(runtime, taskFn, options)' : 'ctx.run(taskFn, options)'
  if (options === null || typeof options !== 'object') {
    throw new TypeError(`${call}: options must be an object, got ${describeValue(options)}.`)
  }
  // A misspelled option (`lable`, `timout`) must not pass silently in
  // JavaScript. Per call it costs about 3 % of a run() with options, over the
  // 2 % a hot path may spend on a programmer-error check: production builds
  // skip it (creation-time functions such as createRuntime always check).
  if (CHECK_RUN_OPTION_KEYS) {
    for (const key in options) {
      if (IS_RUN_OPTION[key] !== true) assertKnownKeys(call, options, RUN_OPTION_KEYS)
    }
  }
  const { label, signal, priority, dependsOn, timeout, retry } = options
  if (label !== undefined && typeof label !== 'string') {
    throw new TypeError(`${fn}(…, { label }): label must be a string, got ${describeValue(label)}.`)
  }
  if (
    signal !== undefined &&
    !(typeof signal === 'object' && signal !== null && 'aborted' in signal)
  ) {
    throw new TypeError(
      `${fn}(…, { signal }): signal must be an AbortSignal, got ${describeValue(signal)}.`,
    )
  }
  if (priority !== undefined && (typeof priority !== 'number' || !Number.isFinite(priority))) {
    throw new TypeError(
      `${fn}(…, { priority }): priority must be a finite number, got ${describeValue(priority)}.`,
    )
  }
  const defaults = core.control.defaults
  const timeouts =
    timeout === undefined
      ? undefined
      : resolveTimeouts(timeout, nestedOptionName(inCallOf(fn), 'timeout'))
  return Object.freeze({
    label,
    priority: priority ?? defaults?.priority ?? 0,
    signal,
    dependsOn: dependsOn === undefined ? undefined : checkDependencies(core, dependsOn, fn),
    timeouts: defaults === undefined ? timeouts : mergeTimeouts(timeouts, defaults.timeouts),
    retry:
      retry === undefined
        ? defaults?.retry
        : resolveRetry(retry, nestedOptionName(inCallOf(fn), 'retry')),
    given: options,
    core,
  })
}

/**
 * Names a nested option in an error message. Made out here, not as a
 * closure over `fn` inside `resolveRunOptions`: a captured parameter makes
 * the engine allocate a context on every call, also when no option is given.
 */
function inCallOf(fn: 'run' | 'ctx.run'): (inner: string) => string {
  return (inner) => `${fn}(…, { ${inner} })`
}

/** `NODE_ENV=production` (read once, as bundlers replace it) turns the per-call key check off. */
const CHECK_RUN_OPTION_KEYS =
  (globalThis as { process?: { env?: Record<string, string | undefined> } }).process?.env
    ?.NODE_ENV !== 'production'

const IS_RUN_OPTION: Record<string, true | undefined> = Object.assign(
  Object.create(null),
  Object.fromEntries(RUN_OPTION_KEYS.map((key) => [key, true])),
)

const TIMEOUT_KEYS = ['attempt', 'total', 'queue'] as const

/** A call's own limits over the runtime's defaults, field by field. */
function mergeTimeouts(own: Timeouts | undefined, defaults: Timeouts | undefined) {
  if (own === undefined || defaults === undefined) return own ?? defaults
  return {
    attempt: own.attempt ?? defaults.attempt,
    total: own.total ?? defaults.total,
    queue: own.queue ?? defaults.queue,
  }
}

/**
 * What `run(rt, fn)` without options resolves to on `core` (with its
 * `defaults`): one object per runtime, shared by its plain calls, so they
 * allocate nothing here. The fields are in `resolveRunOptions`' order: both
 * kinds of options then share one shape.
 */
export function defaultRunOptionsFor(
  core: RuntimeCore,
  defaults: ResolvedDefaults | undefined,
): ResolvedRunOptions {
  return Object.freeze({
    label: undefined,
    priority: defaults?.priority ?? 0,
    signal: undefined,
    dependsOn: undefined,
    timeouts: defaults?.timeouts,
    retry: defaults?.retry,
    given: NO_OPTIONS,
    core,
  })
}

export function resolveTimeouts(timeout: unknown, where: OptionName): Timeouts {
  if (typeof timeout === 'number') {
    return {
      attempt: validateTimeLimit(timeout, where()),
      total: undefined,
      queue: undefined,
    }
  }
  if (timeout === null || typeof timeout !== 'object') {
    throw new TypeError(
      `${where()}: timeout must be ms per attempt or { attempt?, total?, queue? }, got ${describeValue(timeout)}.`,
    )
  }
  assertKnownKeys(where(), timeout, TIMEOUT_KEYS)
  const { attempt, total, queue } = timeout as Record<string, unknown>
  const pick = (ms: unknown, name: string) =>
    ms === undefined ? undefined : validateTimeLimit(ms, where(name))
  return {
    attempt: pick(attempt, 'attempt'),
    total: pick(total, 'total'),
    queue: pick(queue, 'queue'),
  }
}

/**
 * Every dependency must be a task of this runtime, and it exists before the
 * dependent: that is why a dependency cycle cannot be built.
 */
function checkDependencies(
  core: RuntimeCore,
  dependsOn: unknown,
  fn: string,
): readonly TaskRecord[] {
  if (!Array.isArray(dependsOn)) {
    const got =
      recordOf(dependsOn) === undefined
        ? describeValue(dependsOn)
        : 'one task; wrap it: { dependsOn: [task] }'
    throw new TypeError(
      `${fn}(…, { dependsOn }): dependsOn must be an array of tasks returned by run(), got ${got}.`,
    )
  }
  const records: TaskRecord[] = []
  for (const [index, dependency] of dependsOn.entries()) {
    const record = recordOf(dependency)
    if (record === undefined) {
      throw new TypeError(
        `${fn}(…, { dependsOn }): dependsOn[${index}] is not a task; pass tasks returned by run() or ctx.run(), not promises or functions.`,
      )
    }
    if (record.core !== core) {
      throw new TypeError(
        `${fn}(…, { dependsOn }): dependsOn[${index}] (task #${record.id}) belongs to runtime ${record.core.name}, not ${core.name}; a task can only depend on tasks of its own runtime.`,
      )
    }
    records.push(record)
  }
  return records
}

/**
 * A time limit: a finite number of ms above 0. A limit of 0 would fail
 * every task before its body could run, which is never what a caller means.
 */
function validateTimeLimit(value: unknown, what: string): number {
  const ms = validateMs(value, what)
  if (ms === 0) {
    throw new RangeError(
      `${what}: a time limit of 0 ms would fail every task before it runs; pass a positive number of ms, or leave the limit out for none.`,
    )
  }
  return ms
}
