interface OsLike {
  availableParallelism?: () => number
  cpus?: () => readonly unknown[]
}

/**
 * The number of CPUs this process may use: `navigator.hardwareConcurrency` in
 * browsers (and Node ≥ 21), `os.availableParallelism()` in Node. The Node
 * module is reached through `process.getBuiltinModule` so that the package
 * has no static `node:` import and still bundles for browsers. Falls back
 * to 1 where neither exists (Node 20 before 20.16).
 */
export function availableCpus(): number {
  const navigatorLike = (globalThis as { navigator?: { hardwareConcurrency?: unknown } }).navigator
  const fromNavigator = navigatorLike?.hardwareConcurrency
  if (typeof fromNavigator === 'number' && Number.isInteger(fromNavigator) && fromNavigator > 0) {
    return fromNavigator
  }
  const processLike = (globalThis as { process?: { getBuiltinModule?: (id: string) => unknown } })
    .process
  const os = processLike?.getBuiltinModule?.('node:os') as OsLike | undefined
  const fromOs = os?.availableParallelism?.() ?? os?.cpus?.().length
  return typeof fromOs === 'number' && Number.isInteger(fromOs) && fromOs > 0 ? fromOs : 1
}
