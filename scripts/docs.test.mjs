// Every code sample of every README and docs page runs, against the built
// packages, as a reader would paste it into a file of their own; one that
// cannot run on its own is type-checked instead. None is skipped.
//
// The rule, for whoever writes a README:
//
// - A ```ts or ```js block (also ```typescript, ```javascript) is a complete
//   ES module. It is written to a scratch project that has every workspace
//   package installed (as their built dist/, the way npm would), TypeScript
//   is stripped with `typescript`'s transpileModule (no type check), and it
//   runs with `node`. It passes when its last line runs and the process
//   then exits 0 within 30 s: a throw, a failed assertion, an unhandled
//   rejection, a top-level await that never settles, an early exit or a
//   timer left holding the process fails it.
// - ```ts prelude=<name>[,<name>…] runs the block after the code of
//   scripts/docs-preludes/<name>.ts: for a sample that only lacks a few
//   names (a runtime, a stand-in `fetchUser`). A prelude imports nothing the
//   block imports itself. Make a sample run this way whenever you can.
// - ```ts fragment marks a block that cannot run on its own (a panel that
//   needs a page, a client built with `new Redis()`, a piece of a larger
//   program). It is not skipped: it is type-checked. Its preludes and the
//   block are one module of the scratch project, compiled with the
//   repository's `typescript` (strict, noEmit, lib ES2022 + DOM, Node's
//   types) against the built packages' declarations, all fragments in one
//   program (scripts/docs-typecheck.mjs, on a worker thread while the
//   samples run); any error fails it, named by the page's line. So a renamed
//   export, a wrong option or a wrong argument fails the test. What the
//   block assumes comes from preludes: prelude=declared gives typed
//   declarations (`declare const redis: Redis`) of the application a
//   fragment calls into, so it compiles and could not run. A ```js fragment
//   is checked as JavaScript (checkJs), so its preludes must be JavaScript
//   too (prelude=declared is not).
// - ```ts fragment in=<path> marks an excerpt of a file that runs elsewhere
//   (an example app that its own build type-checks and its e2e tests run),
//   `path` being relative to the page: its lines, comment lines and
//   indentation aside, must be lines of that file, in order and one after
//   the other, so the excerpt cannot drift from the code that runs.
// - A ```tsx fragment (```jsx) is type-checked the same way, with React's
//   JSX; a ```tsx block that is not a fragment is a module that its
//   package's own tests mount (job-react's readme test), not run here.
// - Other languages (sh, json, text, and ```mjs files that a package's own
//   test runs as several processes) are not run here.
// - A page listed in PROVING_PAGES below proves its package's claims with
//   its samples: it has exactly the number of runnable samples listed (a
//   sample lost to a broken fence is noticed), and every one of them checks
//   what it shows with node:assert (an `assert(` or `assert.x(` call).
//
// Every program gets REDIS_URL (a throwaway redis-server started here) and a
// unique PREFIX, so a Redis sample can read them; and POSTGRES_URL (a
// throwaway Postgres started here) and a unique SCHEMA, for a Postgres sample.
import assert from 'node:assert/strict'
import { spawn } from 'node:child_process'
import {
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs'
import { tmpdir } from 'node:os'
import { dirname, join, relative, resolve } from 'node:path'
import { after, before, describe, test } from 'node:test'
import { Worker } from 'node:worker_threads'
import ts from 'typescript'
import { startPostgresServer } from '../tools/postgres-server/index.mjs'
import { startRedisServer } from '../tools/redis-server/index.mjs'

const root = resolve(import.meta.dirname, '..')
const RUN_LANGUAGES = new Set(['ts', 'typescript', 'js', 'javascript'])
/** Languages whose fragments are type-checked though their other blocks are not run here. */
const JSX_LANGUAGES = new Set(['tsx', 'jsx'])
const TIMEOUT_MS = 30_000
const PARALLEL = 2
/** What a program prints after its last line: it ran to the end. */
const END_MARKER = 'docs sample: ran to its last line'

/** Pages whose samples are their package's proof (see the rule above), with their runnable samples. */
const PROVING_PAGES = new Map([
  // one per strategy (two for keepLatest), the quick start and two custom coordinators
  ['packages/job-coordination/README.md', 9],
  // the quick start, retries, links and metrics
  ['packages/job-otel/README.md', 4],
  // the standalone relay (the panel's samples need a page: type-checked fragments)
  ['packages/job-devtools/README.md', 1],
])
const ASSERTS = /\bassert(?:\.\w+)?\(/

/** Every markdown page a reader may open: READMEs and docs, not changelogs or changesets. */
function markdownFiles(dir = root) {
  const out = []
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    if (entry.name.startsWith('.') || entry.name === 'node_modules' || entry.name === 'dist') {
      continue
    }
    const path = join(dir, entry.name)
    if (entry.isDirectory()) out.push(...markdownFiles(path))
    else if (entry.name.endsWith('.md') && entry.name !== 'CHANGELOG.md') out.push(path)
  }
  return out.sort()
}

/**
 * The fenced code blocks of a markdown text: `{ line, language, words, code }`,
 * `line` being the 1-based line of the opening fence, `words` the rest of its
 * info string (`fragment`, `prelude=a,b`, `in=path`).
 */
function codeBlocks(markdown) {
  const blocks = []
  const lines = markdown.split('\n')
  for (let i = 0; i < lines.length; i++) {
    const open = /^(\s*)(`{3,}|~{3,})\s*([^\s`]*)\s*(.*)$/.exec(lines[i])
    if (open === null) continue
    const [, indent, fence, language, rest] = open
    const body = []
    let j = i + 1
    while (j < lines.length && !lines[j].trim().startsWith(fence)) {
      body.push(lines[j].startsWith(indent) ? lines[j].slice(indent.length) : lines[j])
      j++
    }
    blocks.push({
      line: i + 1,
      language: language.toLowerCase(),
      words: rest.split(/\s+/).filter(Boolean),
      code: `${body.join('\n')}\n`,
    })
    i = j
  }
  return blocks
}

/** The markdown without its fenced code blocks. */
function proseOf(markdown) {
  const lines = markdown.split('\n')
  const kept = []
  let fence
  for (const line of lines) {
    const open = /^\s*(`{3,}|~{3,})/.exec(line)
    if (fence === undefined) {
      if (open === null) kept.push(line)
      else fence = open[1]
    } else if (line.trim().startsWith(fence) && line.trim().replace(/[`~]/g, '') === '') {
      fence = undefined
    }
  }
  return kept.join('\n')
}

/** The anchors GitHub gives a page's headings (lower case, punctuation dropped, spaces to hyphens). */
function headingSlugs(markdown) {
  const slugs = new Set()
  const seen = new Map()
  const prose = proseOf(markdown)
  for (const [, heading] of prose.matchAll(/^#{1,6}\s+(.+?)\s*#*\s*$/gm)) {
    const base = heading
      .toLowerCase()
      .replace(/[^\p{L}\p{N}\s_-]/gu, '')
      .replace(/\s/g, '-')
    const count = seen.get(base) ?? 0
    seen.set(base, count + 1)
    slugs.add(count === 0 ? base : `${base}-${count}`)
  }
  return slugs
}

/** What the rule says to do with a block: 'run', 'typecheck', 'excerpt' or 'other'. */
function kindOf(block) {
  const runs = RUN_LANGUAGES.has(block.language)
  if (!block.words.includes('fragment')) return runs ? 'run' : 'other'
  if (!runs && !JSX_LANGUAGES.has(block.language)) return 'other'
  return excerptOf(block) === undefined ? 'typecheck' : 'excerpt'
}

/** The file an excerpt is taken from (`in=<path>`, relative to its page), or undefined. */
function excerptOf(block) {
  const word = block.words.find((w) => w.startsWith('in='))
  return word?.slice('in='.length)
}

/** The prelude names of a block (`prelude=a,b`). */
function preludesOf(block) {
  return block.words
    .filter((word) => word.startsWith('prelude='))
    .flatMap((word) => word.slice('prelude='.length).split(','))
    .filter(Boolean)
}

/** The code of a block's preludes, in order, each ending with a newline. */
function preludeCode(block, where) {
  return preludesOf(block).map((name) => {
    const file = join(root, 'scripts', 'docs-preludes', `${name}.ts`)
    assert.ok(
      existsSync(file),
      `${where}: prelude=${name} names no file scripts/docs-preludes/${name}.ts`,
    )
    const text = readFileSync(file, 'utf8')
    return text.endsWith('\n') ? text : `${text}\n`
  })
}

/** A module node can run: the preludes, then the block, without types. */
function programOf(block, where) {
  const source = [...preludeCode(block, where), block.code].join('')
  const { outputText, diagnostics } = ts.transpileModule(source, {
    fileName: 'sample.ts',
    reportDiagnostics: true,
    compilerOptions: {
      module: ts.ModuleKind.ESNext,
      target: ts.ScriptTarget.ES2022,
      // a sample's `import { Task } from …` used only as a type must vanish,
      // as it would in the reader's own build
      verbatimModuleSyntax: false,
    },
  })
  const errors = (diagnostics ?? []).map((d) =>
    ts.flattenDiagnosticMessageText(d.messageText, '\n'),
  )
  assert.deepEqual(errors, [], `${where}: does not parse`)
  return outputText
}

/**
 * A scratch project where every workspace package (and the packages they
 * depend on) is installed under its name, linked to the workspace folder so
 * that `exports` resolve to the built dist/.
 */
function scratchProject() {
  const dir = mkdtempSync(join(tmpdir(), 'vega-job-docs-'))
  const modules = join(dir, 'node_modules')
  const linked = new Set()
  const link = (name, target) => {
    if (linked.has(name) || !existsSync(target)) return
    linked.add(name)
    mkdirSync(dirname(join(modules, name)), { recursive: true })
    symlinkSync(target, join(modules, name), 'dir')
  }
  const workspace = ['packages', 'tools'].flatMap((group) =>
    readdirSync(join(root, group)).map((name) => join(root, group, name)),
  )
  for (const pkg of workspace) {
    const file = join(pkg, 'package.json')
    if (!existsSync(file)) continue
    link(JSON.parse(readFileSync(file, 'utf8')).name, pkg)
  }
  // Then what they, the examples and the repository depend on (ioredis, a
  // peer such as react, vite for a config sample, p-queue for a comparison),
  // from the first package that has it installed.
  const examples = readdirSync(join(root, 'examples')).map((name) => join(root, 'examples', name))
  for (const field of ['dependencies', 'peerDependencies', 'devDependencies']) {
    for (const pkg of [...workspace, ...examples, root]) {
      const file = join(pkg, 'package.json')
      if (!existsSync(file)) continue
      for (const dep of Object.keys(JSON.parse(readFileSync(file, 'utf8'))[field] ?? {})) {
        link(dep, join(pkg, 'node_modules', dep))
      }
    }
  }
  writeFileSync(join(dir, 'package.json'), '{ "private": true, "type": "module" }\n')
  return dir
}

/** Runs a file with node; resolves with its exit and output, killing it after the limit. */
function runNode(file, env) {
  return new Promise((resolveRun) => {
    const child = spawn(process.execPath, [file], { cwd: dirname(file), env })
    let output = ''
    child.stdout.on('data', (chunk) => {
      output += chunk
    })
    child.stderr.on('data', (chunk) => {
      output += chunk
    })
    let timedOut = false
    const timer = setTimeout(() => {
      timedOut = true
      child.kill('SIGKILL')
    }, TIMEOUT_MS)
    child.on('close', (code, signal) => {
      clearTimeout(timer)
      resolveRun({ code, signal, timedOut, output })
    })
  })
}

/** Runs `jobs` (functions returning promises), at most `limit` at once. */
function pool(jobs, limit) {
  const results = new Array(jobs.length)
  let next = 0
  const worker = async () => {
    while (next < jobs.length) {
      const index = next++
      results[index] = await jobs[index]()
    }
  }
  return Promise.all(Array.from({ length: Math.min(limit, jobs.length) }, worker)).then(
    () => results,
  )
}

/**
 * Type-checks the fragments (see scripts/docs-typecheck.mjs) on a worker
 * thread, so the compiler works while the samples run.
 */
function typecheckOnWorker(fragments, dir) {
  const input = fragments.map((sample) => ({
    where: sample.where,
    line: sample.line,
    language: sample.language,
    preludes: preludeCode(sample, sample.where).join(''),
    code: sample.code,
  }))
  return new Promise((resolveCheck, rejectCheck) => {
    const worker = new Worker(new URL('./docs-typecheck.mjs', import.meta.url), {
      workerData: { fragments: input, dir },
    })
    worker.once('message', resolveCheck)
    worker.once('error', rejectCheck)
    worker.once('exit', (code) =>
      rejectCheck(new Error(`the type-check worker exited with ${code}`)),
    )
  })
}

/** The lines of a text that say something: trimmed, without blank and comment-only lines. */
function codeLines(text) {
  return text
    .split('\n')
    .map((line) => line.trim())
    .filter((line) => line !== '' && !line.startsWith('//'))
}

/**
 * Whether an excerpt's code lines are, in order and one after the other,
 * lines of the file it names (indentation and comment lines aside).
 */
function excerptProblem(sample) {
  const page = sample.where.slice(0, sample.where.lastIndexOf(':'))
  const file = join(root, dirname(page), excerptOf(sample))
  if (!existsSync(file)) return `${sample.where}: in=${excerptOf(sample)} names no file`
  const wanted = codeLines(sample.code)
  if (wanted.length === 0) return `${sample.where}: an excerpt with no code line matches anything`
  const lines = codeLines(readFileSync(file, 'utf8'))
  const found = lines.some((_, start) => wanted.every((line, i) => lines[start + i] === line))
  return found
    ? undefined
    : `${sample.where} is not, line for line, in ${relative(root, file)}: the sample and the code that runs have diverged`
}

const pages = markdownFiles().map((file) => ({
  page: relative(root, file),
  blocks: codeBlocks(readFileSync(file, 'utf8')),
}))
const samples = pages.flatMap(({ page, blocks }) =>
  blocks.map((block) => ({ ...block, where: `${page}:${block.line}`, kind: kindOf(block) })),
)
const toRun = samples.filter((sample) => sample.kind === 'run')
const toTypecheck = samples.filter((sample) => sample.kind === 'typecheck')
const excerpts = samples.filter((sample) => sample.kind === 'excerpt')

describe('docs samples', () => {
  let scratch
  let server
  let postgres
  let outcomes
  let typeChecked

  before(async () => {
    assert.ok(
      existsSync(join(root, 'packages', 'job-core', 'dist')),
      'the packages are not built: run `pnpm build` (pnpm test builds first)',
    )
    scratch = scratchProject()
    // started first, to work while the servers start and the samples run;
    // never rejects: a failed check is each fragment's test's failure, not an unhandled rejection
    const typeCheck = typecheckOnWorker(toTypecheck, scratch).then(
      (errors) => ({ errors }),
      (error) => ({ error }),
    )
    server = await startRedisServer({ folderPrefix: 'vega-job-docs-' })
    postgres = await startPostgresServer({ folderPrefix: 'vega-job-docs-' })
    const jobs = toRun.map((sample, index) => () => {
      let program
      try {
        program = programOf(sample, sample.where)
      } catch (error) {
        return Promise.resolve({ error })
      }
      const file = join(scratch, `sample-${index + 1}.mjs`)
      writeFileSync(
        file,
        `// ${sample.where}\n${program}\nprocess.stdout.write(${JSON.stringify(`\n${END_MARKER}\n`)})\n`,
      )
      const env = {
        ...process.env,
        REDIS_URL: server.url,
        PREFIX: `docs-${index + 1}`,
        POSTGRES_URL: postgres.url,
        SCHEMA: `docs_${index + 1}`,
        NODE_OPTIONS: '',
      }
      return runNode(file, env)
    })
    outcomes = await pool(jobs, PARALLEL)
    typeChecked = await typeCheck
  })

  after(async () => {
    await server?.dispose()
    await postgres?.dispose()
    if (scratch !== undefined) rmSync(scratch, { recursive: true, force: true })
  })

  test('the rule finds the samples', (t) => {
    t.diagnostic(
      `${pages.length} pages, ${toRun.length} samples run, ${toTypecheck.length} fragments ` +
        `type-checked, ${excerpts.length} excerpts matched to the code they come from`,
    )
    assert.ok(toRun.length > 0, 'no ```ts or ```js sample found: the extraction is broken')
  })

  test('proving pages have all their samples, and each sample asserts', () => {
    const problems = []
    for (const [page, expected] of PROVING_PAGES) {
      const runs = toRun.filter((sample) => sample.where.startsWith(`${page}:`))
      if (runs.length !== expected) {
        problems.push(`${page} has ${runs.length} runnable samples, ${expected} expected`)
      }
      for (const sample of runs) {
        if (!ASSERTS.test(sample.code)) {
          problems.push(`${sample.where} checks nothing: prove its claims with node:assert`)
        }
      }
    }
    assert.deepEqual(problems, [])
  })

  test('no page cites a section of a design note that is not in the repository', () => {
    const citations = []
    for (const file of markdownFiles()) {
      readFileSync(file, 'utf8')
        .split('\n')
        .forEach((line, index) => {
          for (const [cited] of line.matchAll(/[\w./-]+\.md §\s?\d+/g)) {
            const target = cited.slice(0, cited.indexOf(' '))
            if (!existsSync(join(dirname(file), target)) && !existsSync(join(root, target))) {
              citations.push(`${relative(root, file)}:${index + 1} cites ${cited}`)
            }
          }
        })
    }
    assert.deepEqual(citations, [], "say it in the page's own words instead")
  })

  test('relative links point at files that exist, and anchors at headings they have', () => {
    const broken = []
    for (const file of markdownFiles()) {
      const text = readFileSync(file, 'utf8')
      // Links inside code blocks are code, not links.
      const prose = proseOf(text)
      for (const [, target] of prose.matchAll(/\]\(([^)\s]+)\)/g)) {
        if (/^[a-z]+:/i.test(target)) continue
        const [path, anchor] = target.split('#')
        const resolved = path === '' ? file : join(dirname(file), decodeURIComponent(path))
        if (!existsSync(resolved)) {
          broken.push(`${relative(root, file)} links to ${target}: no such file`)
          continue
        }
        if (anchor === undefined || !resolved.endsWith('.md')) continue
        if (!headingSlugs(readFileSync(resolved, 'utf8')).has(anchor)) {
          broken.push(`${relative(root, file)} links to ${target}: no such heading`)
        }
      }
    }
    assert.deepEqual(broken, [])
  })

  toRun.forEach((sample, index) => {
    test(`${sample.where} runs (${sample.language}${sample.words.length > 0 ? ` ${sample.words.join(' ')}` : ''})`, () => {
      const outcome = outcomes[index]
      if (outcome.error !== undefined) throw outcome.error
      const ranToTheEnd = outcome.output.includes(END_MARKER)
      const how = outcome.timedOut
        ? `did not exit within ${TIMEOUT_MS / 1000} s (a timer or a socket still holds the process?)`
        : outcome.code !== 0 || ranToTheEnd
          ? `exited with ${outcome.signal ?? outcome.code}`
          : 'exited with 0 before its last line ran (an early process.exit?)'
      assert.ok(
        outcome.code === 0 && !outcome.timedOut && ranToTheEnd,
        `the sample at ${sample.where} ${how}. Fix it, or fence it \`\`\`${sample.language} fragment if it cannot run on its own (scripts/docs.test.mjs says the rule). Its output:\n${outcome.output}`,
      )
    })
  })

  toTypecheck.forEach((sample, index) => {
    test(`${sample.where} type-checks (${sample.language} ${sample.words.join(' ')})`, () => {
      if (typeChecked.error !== undefined) throw typeChecked.error
      assert.deepEqual(
        typeChecked.errors[index],
        [],
        `the fragment at ${sample.where} does not compile: fix it, or give it the names it assumes with a prelude= (scripts/docs.test.mjs says the rule)`,
      )
    })
  })

  for (const sample of excerpts) {
    test(`${sample.where} is in ${excerptOf(sample)}`, () => {
      assert.equal(excerptProblem(sample), undefined)
    })
  }
})
