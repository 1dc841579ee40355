// Every file a comment or a doc points to exists in the repository: a
// pointer to a file that was renamed, merged away or never part of the
// repository (a design note kept elsewhere) is a defect.
//
// What counts as a pointer, precisely:
//
// - Where: the comments of source files (.ts, .tsx, .mts, .cts, .js, .mjs,
//   .cjs; `//` and `/* */`) and the prose of Markdown files, outside fenced
//   code blocks in both (a sample's imports name the reader's own files).
//   CHANGELOG.md files and .changeset/*.md are history and are skipped.
// - What: a token that ends in a file extension of the repository's kinds
//   (ts, tsx, mts, cts, js, mjs, cjs, md, json, yaml, yml, sh, css, html)
//   and either holds a `/` (`internal/stages/queue.ts`,
//   `../docs/building-on-core.md`) or starts with a lowercase letter or
//   digit (`task-state.ts`, a bare Markdown name), so that product names
//   such as Node.js are not taken for files; and the target of a relative
//   Markdown link.
// - Not a pointer: a URL (`https://…`), a package import (`@scope/x/y.js`,
//   `node:…`), a build output or installed file (anything under `dist/` or
//   `node_modules/`), a pattern (`*`, `<name>`, `${…}`, `{a,b}`), and a
//   token right after a `.`/`/`/`@`/`:`/`-`/word character (part of
//   something larger).
// - True when: resolved against the file's own folder it exists; or, for a
//   token with no `./` or `../`, some file of the repository has that path
//   or ends with `/` + that path (`stages/queue.ts` from anywhere in core's
//   `src/`, `scripts/docs.test.mjs` from a package README). A token that
//   names a folder (`src/internal/`) has no extension and is not checked.
// - Named files that are not the repository's, listed in NOT_POINTERS with
//   why: a file a walkthrough asks the reader to save, or one a test or a
//   command writes.
import assert from 'node:assert/strict'
import { execFileSync } from 'node:child_process'
import { existsSync, readFileSync } from 'node:fs'
import { join, posix, resolve } from 'node:path'
import { describe, test } from 'node:test'

const root = resolve(import.meta.dirname, '..')

const CODE = /\.(?:ts|tsx|mts|cts|js|mjs|cjs)$/
const EXTENSIONS = 'ts|tsx|mts|cts|js|mjs|cjs|md|json|yaml|yml|sh|css|html'
const TOKEN = new RegExp(
  `(?<![\\w./@:\\-*<>{$])((?:\\.{1,2}/)*(?:[\\w@.-]+/)*[\\w.-]*[\\w]\\.(?:${EXTENSIONS}))(?![\\w/*>}-])`,
  'g',
)
const LINK = /\]\(([^)\s#]+)(?:#[^)\s]*)?\)/g

/** `file: token` pairs that name a file on purpose absent from the repository, and why. */
const NOT_POINTERS = new Map([
  ['bench/README.md: bench/results/latest.json', 'written by `pnpm bench`, ignored by git'],
  ['bench/README.md: results/2026-12-01-ci-runner.json', 'the name to commit a CI run under'],
  ['packages/job-coordination/README.md: example.mjs', 'the file the reader saves a sample as'],
  ['packages/job-redis/README.md: save.mjs', 'the file the reader saves the walkthrough as'],
  ['packages/job-redis/README.md: orders.mjs', 'the file the reader saves the walkthrough as'],
  ['packages/job-redis/test/readme.test.ts: save.mjs', 'the file the test writes'],
  ['packages/job-postgres/README.md: orders.mjs', 'the file the reader saves the walkthrough as'],
  ['tools/distributed-tests/walkthrough.mjs: orders.mjs', 'the file the test writes'],
  ['scripts/fold-changesets.test.mjs: three.md', 'a changeset the test writes'],
  ['tools/browser/index.test.mjs: ../index.html', 'a page the test writes'],
])

/** Every file of the repository as a clean clone has it (tracked, or new and not ignored). */
function repositoryFiles() {
  const listed = execFileSync('git', ['ls-files', '--cached', '--others', '--exclude-standard'], {
    cwd: root,
    encoding: 'utf8',
    maxBuffer: 64 * 1024 * 1024,
  })
  return listed.split('\n').filter((path) => path !== '' && existsSync(join(root, path)))
}

/** The comment text of a source file, fenced samples inside it blanked. */
function commentsOf(source) {
  const parts = []
  const pattern =
    /\/\*[\s\S]*?\*\/|(?<![:\\'"`])\/\/[^\n]*|'(?:\\.|[^'\\\n])*'|"(?:\\.|[^"\\\n])*"|`(?:\\.|[^`\\])*`/g
  for (const match of source.matchAll(pattern)) {
    const text = match[0]
    if (text.startsWith('/*') || text.startsWith('//')) parts.push(text)
  }
  return withoutFences(parts.join('\n'))
}

/** Markdown prose: fenced blocks blanked. */
function withoutFences(text) {
  return text.replace(/(^|\n)[ \t*]*(```|~~~)[^\n]*\n[\s\S]*?\n[ \t*]*\2[^\n]*/g, '$1')
}

/** The file pointers in `text` (see the rule at the top). */
function pointersIn(text, markdown) {
  const found = new Set()
  for (const match of text.matchAll(TOKEN)) {
    const token = match[1]
    if (!token.includes('/') && !/^[a-z0-9]/.test(token)) continue
    found.add(token)
  }
  if (markdown) {
    for (const match of text.matchAll(LINK)) {
      const target = match[1]
      if (/^[a-z][a-z0-9+.-]*:/i.test(target) || target.startsWith('/')) continue
      found.add(decodeURI(target))
    }
  }
  return [...found].filter(
    (token) =>
      !token.startsWith('@') &&
      !/(^|\/)(dist|node_modules)\//.test(token) &&
      !/[*<>{}$]/.test(token),
  )
}

function makeResolver(files) {
  const paths = new Set(files)
  const folders = new Set()
  for (const file of files) {
    for (let dir = posix.dirname(file); dir !== '.'; dir = posix.dirname(dir)) folders.add(dir)
  }
  const suffixes = new Set()
  for (const file of files) {
    const parts = file.split('/')
    for (let i = 0; i < parts.length; i++) suffixes.add(parts.slice(i).join('/'))
  }
  return (token, from) => {
    const relative = posix.normalize(posix.join(posix.dirname(from), token))
    if (paths.has(relative) || folders.has(relative.replace(/\/$/, ''))) return true
    if (token.startsWith('./') || token.startsWith('../')) return false
    const bare = token.replace(/^\.\//, '')
    return suffixes.has(bare)
  }
}

/** Every pointer in the repository that leads nowhere, as `file: token`. */
function brokenPointers(files = repositoryFiles()) {
  const exists = makeResolver(files)
  const broken = []
  for (const file of files) {
    const markdown = file.endsWith('.md')
    if (!markdown && !CODE.test(file)) continue
    if (/(^|\/)(dist|node_modules)\//.test(file)) continue
    if (markdown && (/(^|\/)CHANGELOG\.md$/.test(file) || file.startsWith('.changeset/'))) continue
    const source = readFileSync(join(root, file), 'utf8')
    const text = markdown ? withoutFences(source) : commentsOf(source)
    for (const token of pointersIn(text, markdown)) {
      const pointer = `${file}: ${token}`
      if (!exists(token, file) && !NOT_POINTERS.has(pointer)) broken.push(pointer)
    }
  }
  return broken
}

describe('file pointers in comments and docs', () => {
  test('every one leads to a file of the repository', () => {
    assert.deepEqual(brokenPointers(), [])
  })

  test('the rule finds what it must and nothing it must not', () => {
    const comment = commentsOf(
      [
        "import { x } from './real.js' // see `internal/timeouts.ts` and otel.md §2",
        '/** Node.js, e.g. and `dist/index.js` are no pointers; `stages/queue.ts` is. */',
        "const url = 'https://example.com/a.md' // a string is not a comment",
        '/**',
        ' * ```ts',
        " * import { mine } from './my-plugin.ts'",
        ' * ```',
        ' */',
      ].join('\n'),
    )
    assert.deepEqual(pointersIn(comment, false).sort(), [
      'internal/timeouts.ts',
      'otel.md',
      'stages/queue.ts',
    ])
    const markdown = withoutFences(
      [
        'See [the guide](../docs/guide.md#top), [npm](https://npm.im/x) and `scripts/<name>.ts`.',
        '```ts',
        "import './sample.ts'",
        '```',
        'Built into `packages/x/dist/index.js`, from `@vega/job-core/package.json`.',
      ].join('\n'),
    )
    assert.deepEqual(pointersIn(markdown, true), ['../docs/guide.md'])
    const exists = makeResolver(['packages/a/src/internal/stages/queue.ts', 'docs/guide.md'])
    assert.equal(exists('stages/queue.ts', 'packages/a/README.md'), true)
    assert.equal(exists('../../docs/guide.md', 'packages/a/README.md'), true)
    assert.equal(exists('../docs/guide.md', 'packages/a/README.md'), false)
    assert.equal(exists('since-offset.ts', 'packages/a/src/x.ts'), false)
  })
})
