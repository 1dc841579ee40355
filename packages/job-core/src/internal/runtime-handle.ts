import type { Runtime } from '../types/task.js'
import { VERSION } from '../version.js'
import type { RuntimeCore } from './model.js'
import { describeValue } from './validate.js'

declare const __MODULE_FORMAT__: string

/** Marks a runtime handle of any copy of this package, so another copy can say what it was handed. */
export const RUNTIME_BRAND: unique symbol = Symbol.for('@vega/job-core/runtime') as never

/** What this copy of the package is, for errors about runtimes from another copy. */
export const THIS_COPY: string = `@vega/job-core@${VERSION} (${__MODULE_FORMAT__})`

let readCore: (value: object) => RuntimeCore | undefined

/** Refuses a handle made outside the kernel (`new runtime.constructor(…)`). */
const MADE_BY_KERNEL: unique symbol = Symbol('RuntimeHandle')

/**
 * What `createRuntime` returns: its `name` and nothing else. The kernel's
 * state behind it is out of reach (`#core`); the handle is frozen, so it
 * cannot be changed or extended either.
 */
export class RuntimeHandle implements Runtime {
  readonly #core: RuntimeCore

  static {
    readCore = (value) => (#core in value ? (value as RuntimeHandle).#core : undefined)
  }

  constructor(made: typeof MADE_BY_KERNEL, core: RuntimeCore) {
    if (made !== MADE_BY_KERNEL) {
      throw new TypeError('A Runtime is made by createRuntime(); it has no public constructor.')
    }
    this.#core = core
  }

  get name(): string {
    return this.#core.name
  }
}

Object.freeze(RuntimeHandle.prototype)

/** The handle of `core` (frozen by `createRuntime` once its symbols are set). */
export function createRuntimeHandle(core: RuntimeCore): RuntimeHandle {
  return new RuntimeHandle(MADE_BY_KERNEL, core)
}

/** The kernel state behind a handle of this copy; `undefined` for anything else. */
export function coreOfHandle(value: unknown): RuntimeCore | undefined {
  if (value === null || typeof value !== 'object') return undefined
  return readCore(value)
}

/** The runtime behind a public handle, or a `TypeError` that says what was passed. */
export function toCore(runtime: Runtime, where: string): RuntimeCore {
  const core = coreOfHandle(runtime)
  if (core !== undefined) return core
  const brand = (runtime as { [RUNTIME_BRAND]?: unknown } | null | undefined)?.[RUNTIME_BRAND]
  if (typeof brand === 'string') {
    // Two copies of the package in one process (ESM and CJS builds both
    // loaded, or two versions): each keeps its own runtimes.
    throw new TypeError(
      `${where}: this runtime was created by another copy of the package, ${brand}, and this is ${THIS_COPY}. ` +
        'A runtime only works with the copy that created it: make every import of @vega/job-core resolve to one copy (the same version, and all ESM or all CommonJS).',
    )
  }
  throw new TypeError(
    `${where}: expected a runtime from createRuntime(), got ${describeValue(runtime)}.`,
  )
}
