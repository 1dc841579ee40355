import { readFileSync } from 'node:fs'
import { createRequire } from 'node:module'
import * as coordination from '@vega/job-coordination'
import * as core from '@vega/job-core'
import { describe, expect, it } from 'vitest'
import * as job from '../src/index.js'

const require = createRequire(import.meta.url)

/** Every name (values and types) a package's published declaration file exports. */
function declaredExports(pkg: string): Set<string> {
  const types = require.resolve(pkg).replace(/index\.cjs$/, 'index.d.ts')
  return namesIn(readFileSync(types, 'utf8'))
}

function namesIn(source: string): Set<string> {
  const names = new Set<string>()
  for (const match of source.matchAll(/export\s+(?:type\s+)?\{([^}]*)\}/g)) {
    for (const raw of match[1]!.split(',')) {
      const name = raw
        .replace(/\/\/.*$/gm, '')
        .trim()
        .replace(/^type\s+/, '')
        .split(/\s+as\s+/)
        .pop()
      if (name) names.add(name)
    }
  }
  return names
}

const umbrella = namesIn(readFileSync(new URL('../src/index.ts', import.meta.url), 'utf8'))

describe('@vega/job re-exports everything', () => {
  it.each([
    ['@vega/job-core', core],
    ['@vega/job-coordination', coordination],
  ] as const)('every runtime export of %s is present, as the same value', (_name, source) => {
    // Compare names, not the namespaces: a formatter would call core's `inspect` export.
    const exported = job as Record<string, unknown>
    const missing = Object.keys(source).filter((name) => !(name in exported))
    const different = Object.entries(source)
      .filter(([name, value]) => name in exported && exported[name] !== value)
      .map(([name]) => name)
    expect(missing).toEqual([])
    expect(different).toEqual([])
    expect(Object.keys(source).length).toBeGreaterThan(10)
  })

  it.each(['@vega/job-core', '@vega/job-coordination'])(
    'every declared export (types included) of %s is listed',
    (pkg) => {
      const missing = [...declaredExports(pkg)].filter((name) => !umbrella.has(name))
      expect(missing).toEqual([])
    },
  )

  it('exports nothing of its own', () => {
    const known = new Set([...Object.keys(core), ...Object.keys(coordination)])
    expect(Object.keys(job).filter((name) => !known.has(name))).toEqual([])
  })
})

describe('the original design’s imports work', () => {
  it('createRuntime, run, withCoordinator, dedupeCoordinator from @vega/job', async () => {
    const { createRuntime, run, withCoordinator, dedupeCoordinator, installCoordination } = job
    const runtime = createRuntime({ plugins: [installCoordination] })
    let bodies = 0
    const load = withCoordinator(
      async () => {
        bodies++
        return 'doc'
      },
      dedupeCoordinator,
      { key: ['doc', 1] },
    )
    const [a, b] = await Promise.all([run(runtime, load), run(runtime, load)])
    expect([a, b, bodies]).toEqual(['doc', 'doc', 1])
  })
})
