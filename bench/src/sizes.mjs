// Min+gzip size of each package's entry: dist/index.js minified by esbuild
// (transform: this file alone, imports stay imports), then gzip -9 by
// node:zlib. "bundled" is the whole entry with the @vega packages it
// imports, by the size budget's bundler (bundle.mjs): what an app pays for
// this package and its @vega dependencies, tree-shaking aside.
// "tarball" and "unpacked" are what npm downloads and writes to disk for the
// package (`npm pack --dry-run`): both builds, types, source maps, README.

import { execFileSync } from 'node:child_process'
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs'
import { join } from 'node:path'
import { transform } from 'esbuild'
import { bundledMinGzip, gzipSize, reexport, workspacePackages } from './bundle.mjs'

/** `{ tarball, unpacked }` bytes of the package as npm would pack it (no scripts run). */
function packedSize(dir) {
  const out = execFileSync('npm', ['pack', '--dry-run', '--json', '--ignore-scripts'], {
    cwd: dir,
    encoding: 'utf8',
    stdio: ['ignore', 'pipe', 'ignore'],
  })
  const [pack] = JSON.parse(out)
  return { tarball: pack.size, unpacked: pack.unpackedSize }
}

/** The newest mtime under `dir` (src), to warn about a dist older than its source. */
function newest(dir) {
  let latest = 0
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const path = join(dir, entry.name)
    latest = Math.max(latest, entry.isDirectory() ? newest(path) : statSync(path).mtimeMs)
  }
  return latest
}

export async function measureSizes() {
  const rows = []
  for (const [name, { dir, entry }] of workspacePackages()) {
    const manifest = JSON.parse(readFileSync(join(dir, 'package.json'), 'utf8'))
    if (!existsSync(entry)) {
      rows.push({
        package: name,
        error: 'not built (pnpm turbo run build --filter=@vega/bench^...)',
      })
      continue
    }
    const srcDir = join(dir, 'src')
    rows.push({ ...(await measureEntry(name, entry, srcDir)), ...packedSize(dir) })
    // A chunk the entry loads with import() (the devtools UI) is paid on
    // first use, not at startup: its own row.
    for (const [, chunk] of readFileSync(entry, 'utf8').matchAll(/import\('\.\/([^']+\.js)'\)/g)) {
      const label = `${name} (${chunk.replace(/-[A-Z0-9]+\.js$/, '')} chunk, loaded by import())`
      rows.push(await measureEntry(label, join(dir, 'dist', chunk), srcDir))
    }
    // Other browser-facing entries (`/production`); `/server` is Node-only.
    for (const [subpath, target] of Object.entries(manifest.exports ?? {})) {
      if (subpath !== './production' || typeof target?.import?.default !== 'string') continue
      const file = join(dir, target.import.default)
      rows.push(await measureEntry(`${name}${subpath.slice(1)}`, file, srcDir))
    }
  }
  return rows
}

async function measureEntry(label, entry, srcDir) {
  const source = readFileSync(entry, 'utf8')
  const minified = (await transform(source, { minify: true, format: 'esm', target: 'es2022' })).code
  const stale = existsSync(srcDir) && newest(srcDir) > statSync(entry).mtimeMs
  return {
    package: label,
    raw: Buffer.byteLength(source),
    minified: Buffer.byteLength(minified),
    minGzip: gzipSize(minified),
    bundledMinGzip: await bundledMinGzip(reexport(entry)),
    stale,
  }
}
