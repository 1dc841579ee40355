// Pick-and-choose installs, as a user would do them: pack each package with
// `pnpm pack`, install only the tarballs a scenario needs into a fresh npm
// project outside the workspace, then import from ESM and require from CJS
// and run a real task. Needs the packages built (`pnpm test` builds first).
import assert from 'node:assert/strict'
import { execFileSync } from 'node:child_process'
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join, resolve } from 'node:path'
import { after, test } from 'node:test'

const root = resolve(import.meta.dirname, '..')
const packs = mkdtempSync(join(tmpdir(), 'vega-packs-'))
const tarballs = new Map()

/** Packs `packages/<dir>` once and returns its tarball's path. */
function tarball(dir) {
  const known = tarballs.get(dir)
  if (known) return known
  const pkgDir = join(root, 'packages', dir)
  assert.ok(existsSync(join(pkgDir, 'dist')), `packages/${dir} is not built; run pnpm build first`)
  const seen = new Set(readdirSync(packs))
  execFileSync('pnpm', ['pack', '--pack-destination', packs], { cwd: pkgDir, stdio: 'pipe' })
  const created = readdirSync(packs).find((f) => !seen.has(f))
  assert.ok(created, `pnpm pack produced no tarball for ${dir}`)
  tarballs.set(dir, join(packs, created))
  return tarballs.get(dir)
}

after(() => rmSync(packs, { recursive: true, force: true }))

/**
 * Installs exactly `dirs` into a fresh project and runs `esm` and `cjs` there.
 * `offline: false` lets npm fetch third-party dependencies (ioredis) that are
 * not in its cache yet; `alongside` are registry packages the user installs
 * next to ours (react for the hooks).
 */
function consumer(dirs, esm, cjs, { offline = true, alongside = [] } = {}) {
  const project = mkdtempSync(join(tmpdir(), 'vega-consumer-'))
  try {
    writeFileSync(
      join(project, 'package.json'),
      JSON.stringify({ name: 'consumer', private: true }),
    )
    execFileSync(
      'npm',
      [
        'install',
        '--no-audit',
        '--no-fund',
        offline ? '--offline' : '--prefer-offline',
        '--no-package-lock',
        ...dirs.map(tarball),
        ...alongside,
      ],
      { cwd: project, stdio: 'pipe' },
    )
    writeFileSync(join(project, 'check.mjs'), esm)
    writeFileSync(join(project, 'check.cjs'), cjs)
    const fromEsm = execFileSync('node', ['check.mjs'], { cwd: project, encoding: 'utf8' }).trim()
    const fromCjs = execFileSync('node', ['check.cjs'], { cwd: project, encoding: 'utf8' }).trim()
    return {
      fromEsm,
      fromCjs,
      installed: readdirSync(join(project, 'node_modules', '@vega')).sort(),
    }
  } finally {
    rmSync(project, { recursive: true, force: true })
  }
}

const coreScript = (load) => `${load}
const runtime = createRuntime({ concurrency: 2 })
Promise.all([run(runtime, async (ctx) => { await ctx.sleep(1); return 20 }), run(runtime, () => 22)])
  .then(([a, b]) => console.log(a + b))`

test('@vega/job-core alone', () => {
  const { fromEsm, fromCjs, installed } = consumer(
    ['job-core'],
    coreScript("import { createRuntime, run } from '@vega/job-core'"),
    coreScript("const { createRuntime, run } = require('@vega/job-core')"),
  )
  assert.deepEqual(installed, ['job-core'])
  assert.equal(fromEsm, '42')
  assert.equal(fromCjs, '42')
})

const coordinationScript = (load) => `${load}
const runtime = createRuntime({ plugins: [installCoordination] })
const fn = withCoordinator(async () => Math.random(), dedupeCoordinator, { key: ['doc', 1] })
const a = run(runtime, fn), b = run(runtime, fn)
Promise.all([a, b]).then(([x, y]) => console.log(x === y, b.state, b.cancelReason))`

test('@vega/job-coordination with its peer core', () => {
  const { fromEsm, fromCjs, installed } = consumer(
    ['job-core', 'job-coordination'],
    coordinationScript(
      "import { createRuntime, run } from '@vega/job-core'\nimport { installCoordination, withCoordinator, dedupeCoordinator } from '@vega/job-coordination'",
    ),
    coordinationScript(
      "const { createRuntime, run } = require('@vega/job-core')\nconst { installCoordination, withCoordinator, dedupeCoordinator } = require('@vega/job-coordination')",
    ),
  )
  assert.deepEqual(installed, ['job-coordination', 'job-core'])
  assert.equal(fromEsm, 'true cancelled dedupe')
  assert.equal(fromCjs, 'true cancelled dedupe')
})

test('@vega/job, the umbrella, with the original design’s imports', () => {
  const load = (how) =>
    how === 'esm'
      ? "import { createRuntime, run, withCoordinator, dedupeCoordinator, installCoordination } from '@vega/job'"
      : "const { createRuntime, run, withCoordinator, dedupeCoordinator, installCoordination } = require('@vega/job')"
  const { fromEsm, fromCjs } = consumer(
    ['job-core', 'job-coordination', 'job'],
    coordinationScript(load('esm')),
    coordinationScript(load('cjs')),
  )
  assert.equal(fromEsm, 'true cancelled dedupe')
  assert.equal(fromCjs, 'true cancelled dedupe')
})

const schedulerScript = (load) => `${load}
console.log(toGroupKey('order-1', 128))`

test('@vega/job-scheduler with its peer core', () => {
  const { fromEsm, fromCjs } = consumer(
    ['job-core', 'job-scheduler'],
    schedulerScript("import { toGroupKey } from '@vega/job-scheduler'"),
    schedulerScript("const { toGroupKey } = require('@vega/job-scheduler')"),
  )
  assert.equal(fromEsm, '114')
  assert.equal(fromCjs, '114')
})

const devtoolsScript = (load) => `${load}
console.log(JSON.stringify(toWire(new Error('boom'))).includes('"__type":"Error"'), PROTOCOL_VERSION.major)`

test('@vega/job-devtools-protocol alone (core is an optional peer)', () => {
  const { fromEsm, fromCjs, installed } = consumer(
    ['job-devtools-protocol'],
    devtoolsScript("import { toWire, PROTOCOL_VERSION } from '@vega/job-devtools-protocol'"),
    devtoolsScript("const { toWire, PROTOCOL_VERSION } = require('@vega/job-devtools-protocol')"),
  )
  assert.deepEqual(installed, ['job-devtools-protocol'])
  assert.equal(fromEsm, 'true 1')
  assert.equal(fromCjs, 'true 1')
})

const otelScript = (load) => `${load}
const runtime = createRuntime()
const uninstall = installTracing(runtime, { tracer: trace.getTracer('check') })
run(runtime, async () => 42).then((value) => { uninstall(); console.log(value, typeof VERSION) })`

test('@vega/job-otel with its peers core and @opentelemetry/api', () => {
  const { fromEsm, fromCjs, installed } = consumer(
    ['job-core', 'job-otel'],
    otelScript(
      "import { trace } from '@opentelemetry/api'\nimport { createRuntime, run } from '@vega/job-core'\nimport { installTracing, VERSION } from '@vega/job-otel'",
    ),
    otelScript(
      "const { trace } = require('@opentelemetry/api')\nconst { createRuntime, run } = require('@vega/job-core')\nconst { installTracing, VERSION } = require('@vega/job-otel')",
    ),
    // npm installs the peer @opentelemetry/api, which may not be in its cache yet.
    { offline: false },
  )
  assert.deepEqual(installed, ['job-core', 'job-otel'])
  assert.equal(fromEsm, '42 string')
  assert.equal(fromCjs, '42 string')
})

const panelScript = (load) => `${load}
const panel = mountDevtools({ open: true })
const server = await startDevtoolsServer({ port: 0 })
console.log(panel.isOpen, server.relayUrl.startsWith('ws://127.0.0.1:'))
await server.close()`

test('@vega/job-devtools: the production entry and the standalone server, with the protocol', () => {
  const { fromEsm, fromCjs } = consumer(
    ['job-devtools-protocol', 'job-devtools'],
    panelScript(
      "import { mountDevtools } from '@vega/job-devtools/production'\nimport { startDevtoolsServer } from '@vega/job-devtools/server'",
    ),
    `(async () => {\n${panelScript(
      "const { mountDevtools } = require('@vega/job-devtools/production')\nconst { startDevtoolsServer } = require('@vega/job-devtools/server')",
    )}\n})()`,
    // ws, the relay's one third-party dependency, may not be in npm's cache yet.
    { offline: false },
  )
  assert.equal(fromEsm, 'false true')
  assert.equal(fromCjs, 'false true')
})

/** What tsup injects into a CJS build that reads import.meta.url. */
const TSUP_CJS_SHIM = /\/node_modules\/tsup\/assets\/cjs_shims\.js$/

/** The paths inside a tarball, without npm's leading `package/`. */
function tarballFiles(dir) {
  return execFileSync('tar', ['-tzf', tarball(dir)], { encoding: 'utf8' })
    .split('\n')
    .filter(Boolean)
    .map((entry) => entry.replace(/^package\//, ''))
}

/** The package.json as packed (pnpm rewrites workspace: ranges). */
function packedManifest(dir) {
  const text = execFileSync('tar', ['-xzOf', tarball(dir), 'package/package.json'], {
    encoding: 'utf8',
  })
  return JSON.parse(text)
}

const packageDirs = [
  'job-core',
  'job-coordination',
  'job-scheduler',
  'job-devtools-protocol',
  'job-devtools',
  'job',
  'job-redis',
  'job-distributed',
  'job-postgres',
  'job-otel',
  'job-react',
]

for (const dir of packageDirs) {
  test(`packages/${dir}: the tarball is complete on its own`, () => {
    const files = tarballFiles(dir)
    for (const required of [
      'LICENSE',
      'README.md',
      'package.json',
      'dist/index.js',
      'dist/index.cjs',
      'dist/index.d.ts',
      'dist/index.d.cts',
    ]) {
      assert.ok(files.includes(required), `${dir}: ${required} missing from ${files.join(', ')}`)
    }
    const manifest = packedManifest(dir)
    assert.equal(manifest.license, 'MIT')
    assert.deepEqual(manifest.repository, {
      type: 'git',
      url: 'git+https://github.com/vega-job/vega-job.git',
      directory: `packages/${dir}`,
    })
    assert.equal(
      manifest.homepage,
      `https://github.com/vega-job/vega-job/tree/main/packages/${dir}#readme`,
    )
    assert.equal(manifest.bugs, 'https://github.com/vega-job/vega-job/issues')
    for (const range of Object.values({ ...manifest.dependencies, ...manifest.peerDependencies })) {
      assert.doesNotMatch(range, /^workspace:/, `${dir}: a workspace: range was packed`)
    }
  })

  test(`packages/${dir}: the tarball holds no tests, and its source maps map only src/`, () => {
    const files = tarballFiles(dir)
    const tests = files.filter((file) =>
      /(^|\/)(test|tests|__tests__)\/|\.(test|spec)\.[cm]?[jt]s/.test(file),
    )
    assert.deepEqual(tests, [], `${dir}: test files packed`)
    const maps = files.filter((file) => file.endsWith('.map'))
    assert.ok(maps.length > 0, `${dir}: no source map packed (${files.join(', ')})`)
    for (const map of maps) {
      const text = execFileSync('tar', ['-xzOf', tarball(dir), `package/${map}`], {
        encoding: 'utf8',
        maxBuffer: 64 * 1024 * 1024,
      })
      // tsup's own import.meta.url shim for a CJS build (`shims: true`, the
      // devtools server needs it) is mapped too: a bundler asset, not a file
      // of the repository.
      const outside = JSON.parse(text).sources.filter(
        (source) => !source.startsWith('../src/') && !TSUP_CJS_SHIM.test(source),
      )
      assert.deepEqual(outside, [], `${dir}: ${map} maps files outside src/`)
    }
  })

  test(`packages/${dir}: README links work on npm (absolute, or anchors)`, () => {
    const readme = readFileSync(join(root, 'packages', dir, 'README.md'), 'utf8')
    for (const [, target] of readme.matchAll(/\]\(([^)\s]+)\)/g)) {
      assert.match(target, /^(https:\/\/|#)/, `${dir}/README.md links to ${target}`)
    }
  })
}

test('packages/job-core: the retry, timeout and shaper reference ships in the tarball', () => {
  assert.ok(tarballFiles('job-core').includes('docs/retry-timeout-shapers.md'))
})

test('the root LICENSE is MIT and every package carries the same text', () => {
  const license = readFileSync(join(root, 'LICENSE'), 'utf8')
  assert.match(license, /^MIT License\n\nCopyright \(c\) 2026 the @vega\/job authors\n/)
  for (const dir of packageDirs) {
    assert.equal(readFileSync(join(root, 'packages', dir, 'LICENSE'), 'utf8'), license, dir)
  }
})

// No server needed: a lazy client is a real ioredis client that has not
// connected yet; the check is that the package, its peers and ioredis load
// and wire up from both module systems, and that bad options fail early.
const redisScript = (load) => `${load}
const redis = new Redis({ lazyConnect: true })
const cluster = createRedisCoordination({ redis, prefix: 'vj', leaseMs: 1000 })
const runtime = createRuntime({ plugins: [installCoordination, cluster.plugin] })
let error
try { createRedisCoordination({ redis, prefix: '', leaseMs: 1000 }) } catch (e) { error = e }
console.log(typeof cluster.serialize.coordinate, typeof runtime, error instanceof TypeError, new LeaseLostError('x', 'k', 1).name)
redis.disconnect()`

test('@vega/job-redis with @vega/job-distributed, its peers and ioredis', () => {
  const { fromEsm, fromCjs, installed } = consumer(
    ['job-core', 'job-coordination', 'job-scheduler', 'job-distributed', 'job-redis'],
    redisScript(
      "import { createRuntime } from '@vega/job-core'\nimport { installCoordination } from '@vega/job-coordination'\nimport { createRedisCoordination, LeaseLostError } from '@vega/job-redis'\nimport { Redis } from 'ioredis'",
    ),
    redisScript(
      "const { createRuntime } = require('@vega/job-core')\nconst { installCoordination } = require('@vega/job-coordination')\nconst { createRedisCoordination, LeaseLostError } = require('@vega/job-redis')\nconst { Redis } = require('ioredis')",
    ),
    { offline: false },
  )
  assert.deepEqual(installed, [
    'job-coordination',
    'job-core',
    'job-distributed',
    'job-redis',
    'job-scheduler',
  ])
  assert.equal(fromEsm, 'function object true LeaseLostError')
  assert.equal(fromCjs, 'function object true LeaseLostError')
})

// No server needed: a pool connects lazily; the check is that the package,
// its engine-neutral layer, its peers and pg load and wire up from both
// module systems, and that bad options fail early.
const postgresScript = (load) => `${load}
const pool = new pg.Pool({ connectionString: 'postgres://nobody@127.0.0.1:1/none' })
const coordination = createPostgresCoordination({ pool, leaseMs: 1000 })
const runtime = createRuntime({ plugins: [installCoordination, coordination.plugin] })
let error
try { createPostgresCoordination({ pool, schema: 'Bad', leaseMs: 1000 }) } catch (e) { error = e }
console.log(typeof coordination.serialize.coordinate, typeof runtime, error instanceof TypeError, new LeaseLostError('x', 'k', 1).name)
pool.end()`

test('@vega/job-postgres with @vega/job-distributed, its peers and pg', () => {
  const { fromEsm, fromCjs, installed } = consumer(
    ['job-core', 'job-coordination', 'job-scheduler', 'job-distributed', 'job-postgres'],
    postgresScript(
      "import { createRuntime } from '@vega/job-core'\nimport { installCoordination } from '@vega/job-coordination'\nimport { createPostgresCoordination, LeaseLostError } from '@vega/job-postgres'\nimport pg from 'pg'",
    ),
    postgresScript(
      "const { createRuntime } = require('@vega/job-core')\nconst { installCoordination } = require('@vega/job-coordination')\nconst { createPostgresCoordination, LeaseLostError } = require('@vega/job-postgres')\nconst pg = require('pg')",
    ),
    { offline: false, alongside: ['pg@8'] },
  )
  assert.deepEqual(installed, [
    'job-coordination',
    'job-core',
    'job-distributed',
    'job-postgres',
    'job-scheduler',
  ])
  assert.equal(fromEsm, 'function object true LeaseLostError')
  assert.equal(fromCjs, 'function object true LeaseLostError')
})

// The hooks render on the server from both module systems: the component
// reads 'idle' and nothing runs.
const reactScript = (load) => `${load}
const runtime = createRuntime()
function App() {
  const search = useTask(async (ctx, q) => q)
  return createElement('p', null, search.state)
}
const html = renderToString(createElement(JobProvider, { runtime }, createElement(App)))
let error
try { JobProvider({ runtime: undefined }) } catch (e) { error = e }
console.log(html, inspect(runtime).lastSeq, error instanceof TypeError)`

test('@vega/job-react with its peers core and react', () => {
  const { fromEsm, fromCjs, installed } = consumer(
    ['job-core', 'job-react'],
    reactScript(
      "import { createRuntime, inspect } from '@vega/job-core'\nimport { JobProvider, useTask } from '@vega/job-react'\nimport { createElement } from 'react'\nimport { renderToString } from 'react-dom/server'",
    ),
    reactScript(
      "const { createRuntime, inspect } = require('@vega/job-core')\nconst { JobProvider, useTask } = require('@vega/job-react')\nconst { createElement } = require('react')\nconst { renderToString } = require('react-dom/server')",
    ),
    { offline: false, alongside: ['react@19.3.1', 'react-dom@19.3.1'] },
  )
  assert.deepEqual(installed, ['job-core', 'job-react'])
  assert.equal(fromEsm, '<p>idle</p> 0 true')
  assert.equal(fromCjs, '<p>idle</p> 0 true')
})
