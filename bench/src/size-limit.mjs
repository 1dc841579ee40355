// The size budget: what an application pays, min+gzip, for each entry of
// the repository's .size-limit.json (the size-limit convention: a name, a
// limit, and either the names it imports from which built files, or the
// `path` of a package's built entry), bundled by bundle.mjs. An `import`
// entry is bundled with the @vega packages it reaches, anything else
// external: what an application pays for those calls. A `path` entry is
// that package alone, every other package external: what it adds on top
// of its peers. Every package must have a
// `path` entry. Exits 1 when an entry is over its limit, so CI holds the
// budget.
//
//   node src/size-limit.mjs [--json]

import { existsSync, readFileSync } from 'node:fs'
import { join, relative } from 'node:path'
import { fileURLToPath } from 'node:url'
import { bundledMinGzip, reexport, root, workspacePackages } from './bundle.mjs'

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
      const bytes = await bundledMinGzip(reexport(owner[0]), { inline: (id) => id === owner[0] })
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
      bytes: await bundledMinGzip(contents),
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
