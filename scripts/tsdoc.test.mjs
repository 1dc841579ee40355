// Every export of every published entry carries TSDoc with an `@example`,
// read from the built declaration files a user's editor reads: a comment
// that lands on the wrong declaration (say, a constant between the comment and
// its function) leaves the export bare there, and fails here.

import assert from 'node:assert/strict'
import { existsSync, readdirSync, readFileSync } from 'node:fs'
import { test } from 'node:test'
import ts from 'typescript'

const PACKAGES = new URL('../packages/', import.meta.url)

/** `[entry, declaration file]` for every subpath export that has types. */
function typedEntries(folder) {
  const manifest = JSON.parse(readFileSync(new URL(`${folder}/package.json`, PACKAGES), 'utf8'))
  const entries = []
  for (const [subpath, target] of Object.entries(manifest.exports ?? {})) {
    const types = target?.import?.types
    if (types === undefined) continue
    entries.push([`${manifest.name}${subpath.slice(1)}`, new URL(`${folder}/${types}`, PACKAGES)])
  }
  return entries
}

/** The exports of a declaration file that have no TSDoc `@example` on any of their declarations. */
function exportsWithoutExample(file) {
  const program = ts.createProgram([file], {
    module: ts.ModuleKind.NodeNext,
    moduleResolution: ts.ModuleResolutionKind.NodeNext,
    target: ts.ScriptTarget.ES2022,
    skipLibCheck: true,
    noEmit: true,
  })
  const checker = program.getTypeChecker()
  const module = checker.getSymbolAtLocation(program.getSourceFile(file))
  assert.ok(module, `${file} is not a module`)
  const bare = []
  for (const exported of checker.getExportsOfModule(module)) {
    const symbol =
      exported.flags & ts.SymbolFlags.Alias ? checker.getAliasedSymbol(exported) : exported
    const documented = (symbol.getDeclarations() ?? []).some((declaration) =>
      ts.getJSDocTags(declaration).some((tag) => tag.tagName.text === 'example'),
    )
    if (!documented) bare.push(exported.name)
  }
  return bare
}

const folders = readdirSync(PACKAGES).filter((folder) =>
  existsSync(new URL(`${folder}/package.json`, PACKAGES)),
)

for (const folder of folders) {
  for (const [entry, file] of typedEntries(folder)) {
    test(`${entry}: every export has TSDoc with an @example`, () => {
      assert.ok(existsSync(file), `${file.pathname} is missing: build first (pnpm build)`)
      assert.deepEqual(exportsWithoutExample(file.pathname), [])
    })
  }
}

test('the check fails on an export whose comment sits on the declaration before it', async () => {
  const { mkdtempSync, writeFileSync, rmSync } = await import('node:fs')
  const { tmpdir } = await import('node:os')
  const { join } = await import('node:path')
  const dir = mkdtempSync(join(tmpdir(), 'vega-tsdoc-'))
  const file = join(dir, 'index.d.ts')
  writeFileSync(
    file,
    [
      '/**',
      ' * Documented.',
      ' * @example',
      ' * ```ts',
      ' * good()',
      ' * ```',
      ' */',
      'export declare function good(): void',
      '/**',
      ' * Its comment went to the constant below.',
      ' * @example',
      ' * ```ts',
      ' * bare()',
      ' * ```',
      ' */',
      'declare const KEYS: readonly string[]',
      'export declare function bare(): void',
      '/** No example. */',
      'export declare const plain: number',
      'export {}',
    ].join('\n'),
  )
  try {
    assert.deepEqual(exportsWithoutExample(file).sort(), ['bare', 'plain'])
  } finally {
    rmSync(dir, { recursive: true })
  }
})
