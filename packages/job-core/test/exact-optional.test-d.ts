// Compiled by `pnpm typecheck` (tsc -p tsconfig.test.json) under the
// repository's `exactOptionalPropertyTypes`, which strict users turn on: an
// optional field that the runtime treats as absent when it is `undefined`
// must say `| undefined`, or `{ signal: maybeSignal }` does not compile.
// Not run by vitest: every check here is a compile-time one, and the
// `@ts-expect-error` lines fail the build if a type becomes too loose.
import {
  createRuntime,
  type DebounceOptions,
  debounce,
  type Plugin,
  type RetryPolicy,
  type RunOptions,
  type RuntimeOptions,
  run,
  type ShutdownOptions,
  shutdown,
  type Task,
  type ThrottleOptions,
  type TimeoutOptions,
  throttle,
} from '../src/index.js'

// What a strict caller has in hand: values that may be missing.
declare const maybeSignal: AbortSignal | undefined
declare const maybeLabel: string | undefined
declare const maybeNumber: number | undefined
declare const maybeTasks: readonly Task<unknown>[] | undefined
declare const maybeTimeout: number | TimeoutOptions | undefined
declare const maybeRetry: number | RetryPolicy | undefined
declare const maybeBoolean: boolean | undefined
declare const maybePlugins: readonly Plugin[] | undefined
declare const maybeMode: 'drain' | 'cancel' | undefined

export function runOptions(): void {
  const runtime = createRuntime({
    name: maybeLabel,
    concurrency: maybeNumber,
    backend: undefined,
    plugins: maybePlugins,
    clock: undefined,
    random: undefined,
  } satisfies RuntimeOptions)

  // The case from the issue.
  run(runtime, () => 1, { signal: maybeSignal })
  run(runtime, () => 1, {
    label: maybeLabel,
    signal: maybeSignal,
    dependsOn: maybeTasks,
    priority: maybeNumber,
    timeout: maybeTimeout,
    retry: maybeRetry,
  })
  run(runtime, (ctx) => ctx.run(() => 2, { signal: maybeSignal, label: maybeLabel }))
  run(runtime, (ctx) => ctx.run(() => 2, undefined))

  const timeout: TimeoutOptions = { attempt: maybeNumber, total: maybeNumber, queue: maybeNumber }
  const policy: RetryPolicy = { attempts: 3, delay: undefined, retryIf: undefined }
  run(runtime, () => 1, { timeout, retry: policy })

  const debounced: DebounceOptions = {
    leading: maybeBoolean,
    trailing: maybeBoolean,
    maxWait: maybeNumber,
  }
  debounce(300, debounced)
  const throttled: ThrottleOptions = { leading: maybeBoolean, trailing: maybeBoolean }
  throttle(300, throttled)

  const stop: ShutdownOptions = { mode: maybeMode, deadline: maybeNumber }
  void shutdown(runtime, stop)
}

export function stillStrict(): void {
  const runtime = createRuntime()
  // @ts-expect-error a label is a string, not a number
  run(runtime, () => 1, { label: 3 })
  // @ts-expect-error attempts is required in a policy
  const policy: RetryPolicy = { delay: 10 }
  // @ts-expect-error a misspelled option is an excess property in a literal
  const options: RunOptions = { lable: 'x' }
  // @ts-expect-error a mode is 'drain' or 'cancel'
  void shutdown(runtime, { mode: 'force' })
  void policy
  void options
}
