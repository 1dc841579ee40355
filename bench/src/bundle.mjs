// What an application pays for some code, as its bundler would ship it:
// esbuild (bundled, tree-shaken, minified, ESM, es2022), then gzip -9. The
// one bundler of the size budget (size-limit.mjs) and of the bench's size
// table (sizes.mjs).
//
// Workspace packages are found by name, in packages/*/package.json, and
// bundled from their built entry (dist/index.js, what their `exports`
// give an importer) when the caller asks for them; every other bare import
// (node builtins, ws, react, a workspace package left out) stays external,
// as it would be for a library's consumer who has it anyway.

import { existsSync, readdirSync, readFileSync } from 'node:fs'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { gzipSync } from 'node:zlib'
import { build } from 'esbuild'

export const root = fileURLToPath(new URL('../../', import.meta.url))
const packagesDir = join(root, 'packages')

/** Every workspace package by name: `{ dir, entry }` (its folder and built entry), in folder order. */
export function workspacePackages() {
  const byName = new Map()
  for (const dir of readdirSync(packagesDir).sort()) {
    const manifest = join(packagesDir, dir, 'package.json')
    if (!existsSync(manifest)) continue
    const { name } = JSON.parse(readFileSync(manifest, 'utf8'))
    byName.set(name, {
      dir: join(packagesDir, dir),
      entry: join(packagesDir, dir, 'dist', 'index.js'),
    })
  }
  return byName
}

/** The package a bare specifier names: `@scope/name` or `name`, without a subpath. */
const packageName = (specifier) =>
  specifier
    .split('/')
    .slice(0, specifier.startsWith('@') ? 2 : 1)
    .join('/')

/** gzip -9 bytes of a text. */
export const gzipSize = (text) => gzipSync(Buffer.from(text), { level: 9 }).length

/**
 * Min+gzip bytes of an ES module source (imports by absolute path or by
 * package name), bundled with the workspace packages it reaches for which
 * `inline(name)` holds (all of them unless told); any other package stays
 * an import.
 */
export async function bundledMinGzip(contents, { inline = () => true } = {}) {
  const packages = workspacePackages()
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
          // Bare specifiers only: relative and absolute paths bundle as usual.
          b.onResolve({ filter: /^[^./]/ }, (args) => {
            const name = packageName(args.path)
            const found = packages.get(name)
            if (found === undefined || !inline(name)) return { path: args.path, external: true }
            // A subpath (`@vega/job-devtools/production`): esbuild's own
            // resolution, through the importer's node_modules and the
            // package's `exports`.
            return args.path === name ? { path: found.entry } : undefined
          })
        },
      },
    ],
  })
  return gzipSize(output.outputFiles[0].text)
}

/** The source of a module that re-exports everything a built file exports (a whole entry, kept alive). */
export const reexport = (file) => `export * from ${JSON.stringify(file)}\n`
