// Proves the boundary check can fail: each rule is broken once in a scratch tree.
import assert from 'node:assert/strict'
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { dirname, join } from 'node:path'
import { test } from 'node:test'
import { checkBoundaries } from './check-boundaries.mjs'

function tree(files) {
  const root = mkdtempSync(join(tmpdir(), 'boundaries-'))
  for (const [path, text] of Object.entries(files)) {
    mkdirSync(dirname(join(root, path)), { recursive: true })
    writeFileSync(join(root, path), typeof text === 'string' ? text : JSON.stringify(text))
  }
  return root
}

const core = { name: '@vega/job-core' }
const coordination = {
  name: '@vega/job-coordination',
  peerDependencies: { '@vega/job-core': '^1.0.0' },
}
const redis = {
  name: '@vega/job-redis',
  dependencies: { ioredis: '^5.9.2', '@vega/job-distributed': '^1.0.0' },
  peerDependencies: {
    '@vega/job-core': '^1.0.0',
    '@vega/job-coordination': '^1.0.0',
    '@vega/job-scheduler': '^1.0.0',
  },
}
const devtools = {
  name: '@vega/job-devtools-protocol',
  peerDependencies: { '@vega/job-core': '^1.0.0' },
  peerDependenciesMeta: { '@vega/job-core': { optional: true } },
}

test('a clean tree passes', () => {
  const root = tree({
    'packages/job-core/package.json': core,
    'packages/job-core/src/index.ts': "export { run } from './run.js'\n",
    'packages/job-coordination/package.json': coordination,
    'packages/job-coordination/src/index.ts': "import { run } from '@vega/job-core'\n",
    'packages/job-devtools-protocol/package.json': devtools,
    'packages/job-devtools-protocol/src/index.ts':
      "import type { Runtime } from '@vega/job-core'\n",
    'packages/job-redis/package.json': redis,
    'packages/job-redis/src/index.ts':
      "import { run } from '@vega/job-core'\nimport { defineCoordinator } from '@vega/job-coordination'\nimport { Redis } from 'ioredis'\n",
  })
  assert.deepEqual(checkBoundaries(root), [])
  rmSync(root, { recursive: true })
})

test('every rule reports its violation', () => {
  const root = tree({
    'packages/job-core/package.json': { ...core, dependencies: { lodash: '1' } },
    'packages/job-core/src/index.ts': "import { x } from '@vega/job-coordination'\n",
    'packages/job-coordination/package.json': { name: '@vega/job-coordination' },
    'packages/job-coordination/src/index.ts':
      "import { run } from '@vega/job-core/src/run'\nimport { y } from '../../job-core/src/y.js'\n",
    'packages/job-devtools-protocol/package.json': devtools,
    'packages/job-devtools-protocol/src/index.ts': "import { run } from '@vega/job-core'\n",
    'examples/demo/index.mjs': "import { run } from '@vega/job-core/dist/index.js'\n",
  })
  const problems = checkBoundaries(root).join('\n')
  assert.match(problems, /zero runtime dependencies/)
  assert.match(problems, /imports no sibling/)
  assert.match(problems, /deep import '@vega\/job-core\/src\/run'/)
  assert.match(problems, /without declaring it/)
  assert.match(problems, /leaves its package/)
  assert.match(problems, /import type/)
  assert.match(problems, /examples\/demo\/index\.mjs: deep import/)
  rmSync(root, { recursive: true })
})

test('the redis package takes its siblings as peers and ioredis as a real dependency', () => {
  const root = tree({
    'packages/job-redis/package.json': {
      name: '@vega/job-redis',
      dependencies: { '@vega/job-core': '^1.0.0' },
      devDependencies: { ioredis: '^5.9.2' },
      peerDependencies: { '@vega/job-coordination': '^1.0.0' },
    },
    'packages/job-redis/src/index.ts': "import { Redis } from 'ioredis'\n",
  })
  const problems = checkBoundaries(root).join('\n')
  assert.match(problems, /must declare @vega\/job-core in peerDependencies/)
  assert.match(problems, /must take @vega\/job-core as a peer, not in dependencies/)
  assert.match(problems, /must declare @vega\/job-scheduler in peerDependencies/)
  assert.match(problems, /must declare ioredis in dependencies \(a real dependency\)/)
  assert.doesNotMatch(problems, /@vega\/job-coordination in peerDependencies/)
  rmSync(root, { recursive: true })
})
