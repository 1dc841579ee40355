// Min+gzip size of each package's entry: dist/index.js minified by esbuild
// (transform: this file alone, imports stay imports), then gzip -9 by
// node:zlib. "bundled" also pulls in the @vega packages it imports (what an
// app pays for this package and its @vega dependencies, tree-shaking aside).
// "tarball" and "unpacked" are what npm downloads and writes to disk for the
// package (`npm pack --dry-run`): both builds, types, source maps, README.

import { execFileSync } from 'node:child_process'

import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { gzipSync } from 'node:zlib'
import { build, transform } from 'esbuild'

const packagesDir = fileURLToPath(new URL('../../packages/', import.meta.url))

const gz = (text) => gzipSync(Buffer.from(text), { level: 9 }).length

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
  for (const dir of readdirSync(packagesDir).sort()) {
    const manifest = join(packagesDir, dir, 'package.json')
    if (!existsSync(manifest)) continue
    const name = JSON.parse(readFileSync(manifest, 'utf8')).name
    const entry = join(packagesDir, dir, 'dist', 'index.js')
    if (!existsSync(entry)) {
      rows.push({
        package: name,
        error: 'not built (pnpm turbo run build --filter=@vega/bench^...)',
      })
      continue
    }
    const source = readFileSync(entry, 'utf8')
    const minified = (await transform(source, { minify: true, format: 'esm', target: 'es2022' }))
      .code
    // Bundle with its @vega dependencies; anything else (none today) stays external.
    const bundled = await build({
      entryPoints: [entry],
      bundle: true,
      write: false,
      minify: true,
      format: 'esm',
      target: 'es2022',
      platform: 'neutral',
      external: ['node:*'],
      plugins: [
        {
          name: 'external-non-vega',
          setup(b) {
            b.onResolve({ filter: /^[^./]/ }, (args) =>
              args.path.startsWith('@vega/') ? undefined : { path: args.path, external: true },
            )
          },
        },
      ],
      logLevel: 'silent',
    })
    const srcDir = join(packagesDir, dir, 'src')
    const stale = existsSync(srcDir) && newest(srcDir) > statSync(entry).mtimeMs
    rows.push({
      package: name,
      raw: Buffer.byteLength(source),
      minified: Buffer.byteLength(minified),
      minGzip: gz(minified),
      bundledMinGzip: gz(bundled.outputFiles[0].text),
      ...packedSize(join(packagesDir, dir)),
      stale,
    })
  }
  return rows
}
