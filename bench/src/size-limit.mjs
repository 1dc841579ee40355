// The size budget: what an application pays, min+gzip, for each entry of
// the repository's .size-limit.json (the size-limit convention: a name, a
// limit, and either the names it imports from which built files, or the
// `path` of a package's built entry). An `import` entry is bundled by
// esbuild with the @vega packages it reaches (tree-shaken, minified, ESM),
// anything else external: what an application pays for those calls. A
// `path` entry is that package alone, every other package external: what
// it adds on top of its peers. Then gzip -9. Every package must have a
// `path` entry. Exits 1 when an entry is over its limit, so CI holds the
// budget.
//
//   node src/size-limit.mjs [--json]

import { existsSync, readdirSync, readFileSync } from 'node:fs'
import { join, relative } from 'node:path'
import { fileURLToPath } from 'node:url'
import { gzipSync } from 'node:zlib'
import { build } from 'esbuild'

const root = fileURLToPath(new URL('../../', import.meta.url))
const packagesDir = join(root, 'packages')

/** Every workspace package by name: its directory and built entry. */
function workspacePackages() {
  const byName = new Map()
  for (const dir of readdirSync(packagesDir).sort()) {
    const manifest = join(packagesDir, dir, 'package.json')
    if (!existsSync(manifest)) continue
    const { name } = JSON.parse(readFileSync(manifest, 'utf8'))
    byName.set(name, { dir, entry: join(packagesDir, dir, 'dist', 'index.js') })
  }
  return byName
}

/** `"12.5 kB"` → 12,500 bytes (size-limit counts kB as 1,000 B). */
export function parseLimit(limit, name) {
  const match = /^(\d+(?:\.\d+)?)\s*(B|kB)$/.exec(String(limit))
  if (match === null) {
    throw new TypeError(
      `.size-limit.json: "${name}" has limit ${JSON.stringify(limit)}; write it as "12.5 kB" or "900 B".`,
    )
  }
  return Number(match[1]) * (match[2] === 'kB' ? 1000 : 1)
}

/** Min+gzip bytes of an ES module source, bundled with the @vega packages it imports. */
async function bundledSize(contents, packages, inline = () => true) {
  const output = await build({
    stdin: { contents, resolveDir: root, loader: 'js' },
    bundle: true,
    write: false,
    minify: true,
    format: 'esm',
    target: 'es2022',
    platform: 'neutral',
    logLevel: 'silent',
    plugins: [
      {
        name: 'workspace-or-external',
        setup(b) {
          b.onResolve({ filter: /^[^./]/ }, (args) => {
            const found = packages.get(args.path)
            if (found !== undefined && inline(args.path)) return { path: found.entry }
            return { path: args.path, external: true }
          })
        },
      },
    ],
  })
  const text = output.outputFiles[0].text
  return gzipSync(Buffer.from(text), { level: 9 }).length
}

/** The budget rows: the named entries of .size-limit.json, then each package's whole entry. */
export async function measureBudget() {
  const packages = workspacePackages()
  const config = JSON.parse(readFileSync(join(root, '.size-limit.json'), 'utf8'))
  const rows = []
  const covered = new Set()
  for (const { name, import: imports, path, limit } of config) {
    if (path !== undefined) {
      const owner = [...packages].find(([, p]) => relative(root, p.entry) === path)
      if (owner === undefined)
        throw new Error(
          `.size-limit.json: "${name}" names ${path}, which is no package's built entry`,
        )
      if (!existsSync(owner[1].entry)) throw new Error(`${name}: ${path} is not built (pnpm build)`)
      covered.add(owner[0])
      const contents = `export * from ${JSON.stringify(owner[0])}\n`
      const bytes = await bundledSize(contents, packages, (id) => id === owner[0])
      rows.push({ name, bytes, limit: parseLimit(limit, name) })
      continue
    }
    const lines = Object.entries(imports).map(([path, names], index) => {
      const file = join(root, path)
      if (!existsSync(file)) throw new Error(`${name}: ${path} is not built (pnpm build)`)
      const bound = names
        .replace(/[{}\s]/g, '')
        .split(',')
        .filter(Boolean)
      const alias = bound.map((n) => `${n} as ${n}$${index}`).join(', ')
      return {
        code: `import { ${alias} } from ${JSON.stringify(file)}`,
        used: bound.map((n) => `${n}$${index}`),
      }
    })
    // Keep every imported name alive, as an application that calls them would.
    const contents = `${lines.map((l) => l.code).join('\n')}\nglobalThis.__keep = [${lines.flatMap((l) => l.used).join(', ')}]\n`
    rows.push({
      name,
      bytes: await bundledSize(contents, packages),
      limit: parseLimit(limit, name),
    })
  }
  const missing = [...packages.keys()].filter((name) => !covered.has(name))
  if (missing.length > 0) {
    throw new Error(
      `.size-limit.json: no budget for ${missing.join(', ')}; add a { name, path, limit } entry per package`,
    )
  }
  return rows
}

const kB = (bytes) => `${(bytes / 1000).toFixed(2)} kB`

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const rows = await measureBudget()
  if (process.argv.includes('--json')) console.log(JSON.stringify(rows, null, 2))
  else {
    for (const { name, bytes, limit } of rows) {
      const verdict = bytes <= limit ? `  ≤ ${kB(limit)}` : `  OVER ${kB(limit)}`
      console.log(`${name.padEnd(52)} ${kB(bytes).padStart(10)}${verdict}`)
    }
  }
  const over = rows.filter((r) => r.bytes > r.limit)
  if (over.length > 0) {
    console.error(
      `size budget: ${over.map((r) => `${r.name} is ${kB(r.bytes)}, limit ${kB(r.limit)}`).join('; ')}`,
    )
    process.exitCode = 1
  }
}
