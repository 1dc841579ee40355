/**
 * Generates `protocol.json` (a JSON Schema of the envelope and of every
 * event) from the TypeScript types in `src/`, with the TypeScript compiler's
 * type checker. The types are the single source of truth: the schema is what
 * the checker says they are, so a changed type and an unchanged
 * `protocol.json` cannot both pass `test/schema.test.ts`.
 *
 * Run `UPDATE_SCHEMA=1 pnpm vitest run test/schema.test.ts` to rewrite it.
 */
import { readFileSync } from 'node:fs'
import { dirname, join, resolve } from 'node:path'
import { fileURLToPath } from 'node:url'
import ts from 'typescript'

export type JsonSchema = { [keyword: string]: unknown }

const PACKAGE_DIR = resolve(dirname(fileURLToPath(import.meta.url)), '..')

/** The files that define the wire format; the bridge and reducer are not part of it. */
export const WIRE_FILES: readonly string[] = [
  'src/version.ts',
  'src/wire-value.ts',
  'src/session-events.ts',
  'src/task-events.ts',
  'src/coordination-events.ts',
  'src/protocol-events.ts',
  'src/envelope.ts',
  'src/control-message.ts',
]

// A virtual file: instantiates the generic Envelope with its default.
const ROOT_FILE = 'src/__schema_root__.ts'
const ROOT_TEXT =
  "import type { Envelope } from './envelope.js'\nexport type SchemaEnvelope = Envelope\n"

/**
 * Builds the schema. `overrides` replaces the text of wire files (by path
 * relative to the package), which lets a test prove that a changed type
 * changes the schema.
 */
export function generateProtocolSchema(overrides: Record<string, string> = {}): JsonSchema {
  const program = createProgram(overrides)
  const checker = program.getTypeChecker()
  const exports = new Map<string, ts.Symbol>()
  const named = new Set<string>()
  for (const file of [...WIRE_FILES, ROOT_FILE]) {
    const source = program.getSourceFile(join(PACKAGE_DIR, file))
    if (source === undefined) throw new Error(`generate-schema: ${file} is not in the program`)
    const moduleSymbol = checker.getSymbolAtLocation(source)
    for (const symbol of moduleSymbol === undefined
      ? []
      : checker.getExportsOfModule(moduleSymbol)) {
      exports.set(symbol.name, symbol)
      if (file !== ROOT_FILE) named.add(symbol.name)
    }
  }

  const converter = new SchemaConverter(checker, named)
  const declared = (name: string): ts.Type => {
    const symbol = exports.get(name)
    if (symbol === undefined) throw new Error(`generate-schema: ${name} is not exported`)
    return checker.getDeclaredTypeOfSymbol(symbol)
  }
  const typeOfValue = (name: string): ts.Type => {
    const symbol = exports.get(name)
    const declaration = symbol?.valueDeclaration
    if (symbol === undefined || declaration === undefined) {
      throw new Error(`generate-schema: ${name} is not an exported value`)
    }
    return checker.getTypeOfSymbolAtLocation(symbol, declaration)
  }

  // The union's members in the order they are written, not the checker's
  // type-id order (which follows whichever file declared a type first).
  const unionDeclaration = exports.get('ProtocolEvent')?.declarations?.[0]
  if (
    unionDeclaration === undefined ||
    !ts.isTypeAliasDeclaration(unionDeclaration) ||
    !ts.isUnionTypeNode(unionDeclaration.type)
  ) {
    throw new Error('generate-schema: ProtocolEvent must be a type alias of a union')
  }
  const members = unionDeclaration.type.types.map((node) => checker.getTypeFromTypeNode(node))
  const events: string[] = []
  for (const member of members) {
    const name = member.symbol?.name ?? member.aliasSymbol?.name
    if (name === undefined)
      throw new Error('generate-schema: every ProtocolEvent member must be named')
    converter.define(name, member)
    const typeProp = member.getProperty('type')
    const literal = typeProp === undefined ? undefined : checker.getTypeOfSymbol(typeProp)
    if (literal === undefined || !literal.isStringLiteral()) {
      throw new Error(`generate-schema: ${name}.type must be a string literal`)
    }
    events.push(literal.value)
  }
  converter.define('PassthroughEvent', declared('PassthroughEvent'))
  converter.define('WireEvent', declared('WireEvent'))
  converter.define('WireTagged', declared('WireTagged'))
  converter.define('ControlMessage', declared('ControlMessage'))
  const version = converter.convert(typeOfValue('PROTOCOL_VERSION'))
  // `Envelope` without type arguments is Envelope<WireEvent>: the envelope as sent.
  converter.define('Envelope', declared('SchemaEnvelope'))

  return {
    $schema: 'https://json-schema.org/draft/2020-12/schema',
    $id: 'https://vega-job.dev/schemas/devtools-protocol/v1.json',
    title: '@vega/job devtools protocol',
    description:
      'One envelope per line (NDJSON) or per array element (batches). Consumers must ignore unknown event types, unknown fields and unknown enum values; see README.md for the versioning rule.',
    version: { major: constOf(version, 'major'), minor: constOf(version, 'minor') },
    events,
    $ref: '#/$defs/Envelope',
    $defs: converter.sortedDefs(),
  }
}

/** The schema as committed: stable key order, two-space indent, final newline. */
export function formatSchema(schema: JsonSchema): string {
  return `${JSON.stringify(schema, null, 2)}\n`
}

function constOf(schema: JsonSchema, field: string): unknown {
  const properties = schema.properties as Record<string, JsonSchema> | undefined
  const value = properties?.[field]?.const
  if (value === undefined)
    throw new Error(`generate-schema: PROTOCOL_VERSION.${field} must be a literal`)
  return value
}

function createProgram(overrides: Record<string, string>): ts.Program {
  const options: ts.CompilerOptions = {
    target: ts.ScriptTarget.ES2022,
    module: ts.ModuleKind.ESNext,
    moduleResolution: ts.ModuleResolutionKind.Bundler,
    strict: true,
    exactOptionalPropertyTypes: true,
    noEmit: true,
    skipLibCheck: true,
    types: [],
    lib: ['lib.es2022.d.ts'],
  }
  const host = ts.createCompilerHost(options, true)
  const absolute = new Map(
    Object.entries({ ...overrides, [ROOT_FILE]: ROOT_TEXT }).map(([file, text]) => [
      join(PACKAGE_DIR, file),
      text,
    ]),
  )
  const fileExists = host.fileExists.bind(host)
  host.fileExists = (file) => absolute.has(file) || fileExists(file)
  const readFile = host.readFile.bind(host)
  host.readFile = (file) => absolute.get(file) ?? readFile(file)
  const getSourceFile = host.getSourceFile.bind(host)
  host.getSourceFile = (file, languageVersion, onError, shouldCreate) => {
    const text = absolute.get(file)
    return text === undefined
      ? getSourceFile(file, languageVersion, onError, shouldCreate)
      : ts.createSourceFile(file, text, languageVersion, true)
  }
  const program = ts.createProgram({
    rootNames: [...WIRE_FILES, ROOT_FILE].map((file) => join(PACKAGE_DIR, file)),
    options,
    host,
  })
  const diagnostics = ts.getPreEmitDiagnostics(program)
  if (diagnostics.length > 0) {
    throw new Error(
      `generate-schema: the wire types do not compile:\n${ts.formatDiagnostics(diagnostics, {
        getCanonicalFileName: (f) => f,
        getCurrentDirectory: () => PACKAGE_DIR,
        getNewLine: () => '\n',
      })}`,
    )
  }
  return program
}

class SchemaConverter {
  private readonly defs = new Map<string, JsonSchema>()
  private readonly pending = new Set<string>()

  constructor(
    private readonly checker: ts.TypeChecker,
    private readonly named: ReadonlySet<string>,
  ) {}

  define(name: string, type: ts.Type): void {
    if (this.defs.has(name) || this.pending.has(name)) return
    this.pending.add(name)
    const schema = this.convert(type, name)
    this.pending.delete(name)
    const doc = this.docOf(type)
    this.defs.set(name, doc === '' ? schema : { description: doc, ...schema })
  }

  sortedDefs(): Record<string, JsonSchema> {
    return Object.fromEntries([...this.defs.entries()].sort(([a], [b]) => a.localeCompare(b)))
  }

  convert(type: ts.Type, defining?: string): JsonSchema {
    const name = this.nameOf(type)
    if (name !== undefined && name !== defining) {
      this.define(name, type)
      return { $ref: `#/$defs/${name}` }
    }
    return this.structure(type)
  }

  private nameOf(type: ts.Type): string | undefined {
    const alias = type.aliasSymbol?.name
    if (alias !== undefined && this.named.has(alias)) return alias
    const symbol = type.getSymbol()
    if (
      symbol !== undefined &&
      this.named.has(symbol.name) &&
      (symbol.flags & (ts.SymbolFlags.Interface | ts.SymbolFlags.TypeAlias)) !== 0
    ) {
      return symbol.name
    }
    return undefined
  }

  private structure(type: ts.Type): JsonSchema {
    const flags = type.flags
    if (flags & ts.TypeFlags.StringLiteral) return { const: (type as ts.StringLiteralType).value }
    if (flags & ts.TypeFlags.NumberLiteral) return { const: (type as ts.NumberLiteralType).value }
    if (flags & ts.TypeFlags.BooleanLiteral) {
      return { const: this.checker.typeToString(type) === 'true' }
    }
    if (flags & ts.TypeFlags.String) return { type: 'string' }
    if (flags & ts.TypeFlags.Number) return { type: 'number' }
    if (flags & ts.TypeFlags.Boolean) return { type: 'boolean' }
    if (flags & ts.TypeFlags.Null) return { type: 'null' }
    if (flags & (ts.TypeFlags.Unknown | ts.TypeFlags.Any)) return {}
    if (type.isUnion()) return this.union(type.types)
    if (type.isIntersection()) return this.intersection(type.types)
    if (this.checker.isTupleType(type)) {
      const items = this.checker.getTypeArguments(type as ts.TypeReference)
      return {
        type: 'array',
        prefixItems: items.map((item) => this.convert(item)),
        minItems: items.length,
        maxItems: items.length,
      }
    }
    if (this.checker.isArrayType(type)) {
      const [item] = this.checker.getTypeArguments(type as ts.TypeReference)
      return { type: 'array', items: item === undefined ? {} : this.convert(item) }
    }
    if (flags & ts.TypeFlags.Object) return this.object(type)
    throw new Error(`generate-schema: no JSON form for type ${this.checker.typeToString(type)}`)
  }

  // `string & {}` is the open-enum idiom: any string, known values listed.
  private intersection(types: readonly ts.Type[]): JsonSchema {
    const [first] = types
    if (
      types.length === 2 &&
      first !== undefined &&
      first.flags & ts.TypeFlags.String &&
      this.checker.typeToString(types[1] as ts.Type) === '{}'
    ) {
      return { type: 'string' }
    }
    throw new Error(
      `generate-schema: intersections other than string & {} have no schema (${types
        .map((t) => this.checker.typeToString(t))
        .join(' & ')})`,
    )
  }

  private union(types: readonly ts.Type[]): JsonSchema {
    const members = types.filter((t) => !(t.flags & ts.TypeFlags.Undefined))
    const literals = members.filter((t) => t.flags & ts.TypeFlags.StringLiteral)
    const booleans = members.filter((t) => t.flags & ts.TypeFlags.BooleanLiteral)
    const openString = members.some((t) => t.isIntersection() && this.intersection(t.types))
    if (literals.length > 0 && literals.length + (openString ? 1 : 0) === members.length) {
      const values = literals.map((t) => (t as ts.StringLiteralType).value)
      return openString ? { anyOf: [{ enum: values }, { type: 'string' }] } : { enum: values }
    }
    if (booleans.length === 2 && members.length === 2) return { type: 'boolean' }
    const rest = booleans.length === 2 ? members.filter((t) => !booleans.includes(t)) : members
    const anyOf = rest.map((t) => this.convert(t))
    if (booleans.length === 2) anyOf.push({ type: 'boolean' })
    return anyOf.length === 1 ? (anyOf[0] as JsonSchema) : { anyOf }
  }

  private object(type: ts.Type): JsonSchema {
    const properties: Record<string, JsonSchema> = {}
    const required: string[] = []
    for (const property of this.checker.getPropertiesOfType(type)) {
      // getTypeOfSymbol, not …AtLocation: a generic's property must be read
      // as instantiated (Envelope's `e` is WireEvent, not E).
      const propertyType = this.checker.getTypeOfSymbol(property)
      const schema = this.convert(propertyType)
      const doc = plain(ts.displayPartsToString(property.getDocumentationComment(this.checker)))
      properties[property.name] = doc === '' ? schema : { description: doc, ...schema }
      if ((property.flags & ts.SymbolFlags.Optional) === 0) required.push(property.name)
    }
    const out: JsonSchema = { type: 'object', properties }
    if (required.length > 0) out.required = required
    const index = this.checker.getIndexInfosOfType(type)[0]
    if (index !== undefined) out.additionalProperties = this.convert(index.type)
    return out
  }

  private docOf(type: ts.Type): string {
    const symbol = type.aliasSymbol ?? type.getSymbol()
    if (symbol === undefined) return ''
    const text = ts.displayPartsToString(symbol.getDocumentationComment(this.checker))
    // The first paragraph is the description; lists and examples stay in the source.
    return plain(text.trim().split(/\n\s*\n/)[0] ?? '')
  }
}

function plain(doc: string): string {
  return doc
    .replace(/\{@link\s+([^}\s]+)\s*\}/g, '$1')
    .replace(/\s+/g, ' ')
    .trim()
}

/** Reads the committed protocol.json. */
export function readCommittedSchema(): string {
  return readFileSync(join(PACKAGE_DIR, 'protocol.json'), 'utf8')
}

export const SCHEMA_PATH: string = join(PACKAGE_DIR, 'protocol.json')
