import type { Backend } from '../types/backend.js'

/** The optional `Backend` methods runtime control relies on. */
export type BackendCapability = 'setConcurrency' | 'setGate' | 'dropCandidate'

/**
 * Throws a `TypeError` naming the missing capability when the runtime's
 * backend does not offer it: a custom backend that cannot pause, rate-limit,
 * resize or drop says so, never silently ignores the call.
 */
export function requireCapability(
  backend: Backend,
  capability: BackendCapability,
  where: string,
): void {
  const supported =
    capability === 'setGate'
      ? typeof backend.setGate === 'function' && typeof backend.wake === 'function'
      : typeof backend[capability] === 'function'
  if (supported) return
  const constructorName = backend.constructor?.name
  const name =
    constructorName === undefined || constructorName === 'Object'
      ? 'a custom backend'
      : constructorName
  const methods = capability === 'setGate' ? 'setGate() and wake()' : `${capability}()`
  throw new TypeError(
    `${where}: the runtime's backend (${name}) does not support the '${capability}' capability: ` +
      `it has no ${methods}. Implement Backend.${capability} on it, or use the default backend (createPriorityBackend).`,
  )
}
