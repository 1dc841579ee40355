/**
 * A bad value as an error message should echo it: strings quoted (so `'3'`
 * and `3` read differently), numbers, booleans, null and undefined as
 * written, objects by their constructor, functions by name.
 */
export function describeValue(value: unknown): string {
  switch (typeof value) {
    case 'string':
      return `'${value.replace(/\\/g, '\\\\').replace(/'/g, "\\'")}'`
    case 'number':
    case 'boolean':
    case 'undefined':
      return String(value)
    case 'bigint':
      return `${value}n`
    case 'symbol':
      return value.toString()
    case 'function':
      return value.name === '' ? 'a function' : `function ${value.name}`
    default:
      if (value === null) return 'null'
      if (Array.isArray(value)) return 'an array'
      return `an object (${(value as object).constructor?.name ?? 'no prototype'})`
  }
}
