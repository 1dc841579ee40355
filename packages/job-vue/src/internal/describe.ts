/** How an error message shows a value the user passed: short, and never the whole object. */
export function describe(value: unknown): string {
  if (typeof value === 'string') return `'${value}'`
  if (typeof value === 'function') return `a function${value.name ? ` (${value.name})` : ''}`
  if (Array.isArray(value)) return 'an array'
  if (value !== null && typeof value === 'object') {
    const name = (value as { constructor?: { name?: unknown } }).constructor?.name
    return typeof name === 'string' && name !== 'Object' ? `a ${name}` : 'an object'
  }
  return String(value)
}
