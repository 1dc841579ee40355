// A validator for exactly the JSON Schema keywords scripts/generate-schema.ts
// emits; it lets tests check recordings against the committed protocol.json
// without a schema library.
type Schema = { readonly [keyword: string]: unknown }

export function validate(root: Schema, value: unknown): string[] {
  const defs = (root.$defs ?? {}) as Record<string, Schema>
  const errors: string[] = []
  check(root, value, '$', defs, errors)
  return errors
}

const HANDLED = new Set([
  '$schema',
  '$id',
  '$ref',
  '$defs',
  'title',
  'description',
  'version',
  'events',
  'type',
  'const',
  'enum',
  'anyOf',
  'properties',
  'required',
  'additionalProperties',
  'items',
  'prefixItems',
  'minItems',
  'maxItems',
])

function check(
  schema: Schema,
  value: unknown,
  path: string,
  defs: Record<string, Schema>,
  errors: string[],
): void {
  for (const keyword of Object.keys(schema)) {
    if (!HANDLED.has(keyword)) errors.push(`${path}: the validator does not know "${keyword}"`)
  }
  if (typeof schema.$ref === 'string') {
    const name = schema.$ref.replace('#/$defs/', '')
    const target = defs[name]
    if (target === undefined) errors.push(`${path}: unknown $ref ${schema.$ref}`)
    else check(target, value, path, defs, errors)
  }
  if ('const' in schema && value !== schema.const) {
    errors.push(`${path}: expected ${JSON.stringify(schema.const)}, got ${JSON.stringify(value)}`)
  }
  if (Array.isArray(schema.enum) && !schema.enum.includes(value)) {
    errors.push(`${path}: ${JSON.stringify(value)} is not one of ${JSON.stringify(schema.enum)}`)
  }
  if (Array.isArray(schema.anyOf)) {
    const matches = schema.anyOf.some((option) => {
      const sub: string[] = []
      check(option as Schema, value, path, defs, sub)
      return sub.length === 0
    })
    if (!matches)
      errors.push(`${path}: matches no anyOf option (${JSON.stringify(value)?.slice(0, 120)})`)
  }
  if (typeof schema.type === 'string' && !hasType(value, schema.type)) {
    errors.push(`${path}: expected ${schema.type}, got ${JSON.stringify(value)?.slice(0, 80)}`)
    return
  }
  if (schema.type === 'object' && typeof value === 'object' && value !== null) {
    const record = value as Record<string, unknown>
    const properties = (schema.properties ?? {}) as Record<string, Schema>
    for (const field of (schema.required ?? []) as string[]) {
      if (!Object.hasOwn(record, field)) errors.push(`${path}: missing required "${field}"`)
    }
    for (const [field, fieldValue] of Object.entries(record)) {
      const fieldSchema = properties[field]
      if (fieldSchema !== undefined)
        check(fieldSchema, fieldValue, `${path}.${field}`, defs, errors)
      else if (typeof schema.additionalProperties === 'object') {
        check(schema.additionalProperties as Schema, fieldValue, `${path}.${field}`, defs, errors)
      }
    }
  }
  if (schema.type === 'array' && Array.isArray(value)) {
    if (typeof schema.minItems === 'number' && value.length < schema.minItems) {
      errors.push(`${path}: fewer than ${schema.minItems} items`)
    }
    if (typeof schema.maxItems === 'number' && value.length > schema.maxItems) {
      errors.push(`${path}: more than ${schema.maxItems} items`)
    }
    const prefix = (schema.prefixItems ?? []) as Schema[]
    value.forEach((item, index) => {
      const itemSchema = prefix[index] ?? (schema.items as Schema | undefined)
      if (itemSchema !== undefined) check(itemSchema, item, `${path}[${index}]`, defs, errors)
    })
  }
}

function hasType(value: unknown, type: string): boolean {
  switch (type) {
    case 'object':
      return typeof value === 'object' && value !== null && !Array.isArray(value)
    case 'array':
      return Array.isArray(value)
    case 'null':
      return value === null
    case 'number':
      return typeof value === 'number' && Number.isFinite(value)
    default:
      return typeof value === type
  }
}
