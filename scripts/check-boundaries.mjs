#!/usr/bin/env node
// The architecture as a check (run by `pnpm test`): core depends on nothing
// and imports no sibling; every package reaches another only through its
// public entry and only if it declares it; the devtools protocol imports core
// for types only (core is its optional peer).
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs'
import { dirname, join, relative, resolve, sep } from 'node:path'
import { fileURLToPath, pathToFileURL } from 'node:url'

const SOURCE = /\.(?:[cm]?[jt]sx?)$/
const SKIP = new Set(['node_modules', 'dist', '.turbo', 'fixtures'])
const SPECIFIER =
  /(?:^|\n)\s*(import|export)\s+(type\s+)?[^'"`;]*?from\s*['"]([^'"]+)['"]|(?:import|require)\(\s*['"]([^'"]+)['"]\s*\)|(?:^|\n)\s*import\s+['"]([^'"]+)['"]/g

function walk(dir, out = []) {
  if (!existsSync(dir)) return out
  for (const name of readdirSync(dir)) {
    if (SKIP.has(name)) continue
    const path = join(dir, name)
    if (statSync(path).isDirectory()) walk(path, out)
    else if (SOURCE.test(name) && !name.endsWith('.d.ts')) out.push(path)
  }
  return out
}

function importsOf(file) {
  const text = readFileSync(file, 'utf8')
  const found = []
  for (const match of text.matchAll(SPECIFIER)) {
    const specifier = match[3] ?? match[4] ?? match[5]
    found.push({ specifier, typeOnly: Boolean(match[2]) })
  }
  return found
}

/**
 * Manifest shapes the architecture fixes (spec/README.md): which siblings a
 * package takes as peers (one copy of the runtime per app) and which
 * third-party clients it really depends on.
 */
const MANIFESTS = {
  '@vega/job-redis': {
    peers: ['@vega/job-core', '@vega/job-coordination', '@vega/job-scheduler'],
    dependencies: ['ioredis', '@vega/job-distributed'],
  },
  '@vega/job-distributed': {
    peers: ['@vega/job-core', '@vega/job-coordination', '@vega/job-scheduler'],
    dependencies: [],
  },
  '@vega/job-postgres': {
    peers: ['@vega/job-core', '@vega/job-coordination', '@vega/job-scheduler', 'pg'],
    dependencies: ['@vega/job-distributed'],
  },
  '@vega/job-react': {
    peers: ['@vega/job-core', 'react'],
    dependencies: [],
  },
}

function checkManifest(manifest) {
  const rule = MANIFESTS[manifest.name]
  if (rule === undefined) return []
  const problems = []
  for (const peer of rule.peers) {
    if (!(peer in (manifest.peerDependencies ?? {})))
      problems.push(`${manifest.name} must declare ${peer} in peerDependencies`)
    if (peer in (manifest.dependencies ?? {}))
      problems.push(`${manifest.name} must take ${peer} as a peer, not in dependencies`)
  }
  for (const dependency of rule.dependencies) {
    if (!(dependency in (manifest.dependencies ?? {})))
      problems.push(
        `${manifest.name} must declare ${dependency} in dependencies (a real dependency)`,
      )
  }
  return problems
}

/** Returns the violations found under `root`, one sentence each. */
export function checkBoundaries(root) {
  const problems = []
  const packagesDir = join(root, 'packages')
  const packages = existsSync(packagesDir)
    ? readdirSync(packagesDir)
        .map((name) => join(packagesDir, name))
        .filter((dir) => existsSync(join(dir, 'package.json')))
    : []
  const manifests = new Map(
    packages.map((dir) => [dir, JSON.parse(readFileSync(join(dir, 'package.json'), 'utf8'))]),
  )
  const names = new Set([...manifests.values()].map((m) => m.name))

  for (const [dir, manifest] of manifests) {
    const isCore = manifest.name === '@vega/job-core'
    const declared = new Set([
      ...Object.keys(manifest.dependencies ?? {}),
      ...Object.keys(manifest.peerDependencies ?? {}),
    ])
    const optionalPeers = new Set(
      Object.entries(manifest.peerDependenciesMeta ?? {})
        .filter(([, meta]) => meta?.optional)
        .map(([name]) => name),
    )
    problems.push(...checkManifest(manifest))
    if (isCore && Object.keys(manifest.dependencies ?? {}).length > 0) {
      problems.push(
        `@vega/job-core must have zero runtime dependencies, found: ${Object.keys(manifest.dependencies).join(', ')}`,
      )
    }
    for (const file of walk(join(dir, 'src'))) {
      const where = relative(root, file)
      for (const { specifier, typeOnly } of importsOf(file)) {
        if (specifier.startsWith('.')) {
          const target = resolve(dirname(file), specifier)
          if (!target.startsWith(dir + sep))
            problems.push(`${where}: relative import '${specifier}' leaves its package`)
          continue
        }
        const sibling = [...names].find(
          (name) => specifier === name || specifier.startsWith(`${name}/`),
        )
        if (sibling === undefined) continue
        if (isCore)
          problems.push(`${where}: @vega/job-core imports no sibling, found '${specifier}'`)
        if (specifier !== sibling)
          problems.push(`${where}: deep import '${specifier}'; use the public entry '${sibling}'`)
        if (!declared.has(sibling))
          problems.push(`${where}: imports ${sibling} without declaring it in package.json`)
        if (optionalPeers.has(sibling) && !typeOnly) {
          problems.push(
            `${where}: ${sibling} is an optional peer, so import it with 'import type' only`,
          )
        }
      }
    }
  }

  for (const file of walk(join(root, 'examples'))) {
    const where = relative(root, file)
    for (const { specifier } of importsOf(file)) {
      const sibling = [...names].find((name) => specifier.startsWith(`${name}/`))
      if (sibling !== undefined)
        problems.push(`${where}: deep import '${specifier}'; use the public entry '${sibling}'`)
      if (specifier.startsWith('.') && /packages[\\/]/.test(resolve(dirname(file), specifier))) {
        problems.push(`${where}: reaches into packages/ by path; import the package by name`)
      }
    }
  }
  return problems
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) {
  const root = resolve(dirname(fileURLToPath(import.meta.url)), '..')
  const problems = checkBoundaries(root)
  if (problems.length > 0) {
    console.error(`Package boundary check failed (${problems.length}):\n- ${problems.join('\n- ')}`)
    process.exit(1)
  }
  console.log('Package boundaries: ok')
}
