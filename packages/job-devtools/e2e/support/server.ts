import { join, normalize, resolve, sep } from 'node:path'
import { fileURLToPath } from 'node:url'
import { type FileServer, serveFiles } from '@vega/browser'

const PACKAGES = resolve(fileURLToPath(new URL('../../..', import.meta.url)))
const PAGES = resolve(fileURLToPath(new URL('../pages', import.meta.url)))
// The test pages import the built packages by name through an import map:
// the same files a user's bundler would pick, no bundler in between.
export const IMPORT_MAP = JSON.stringify({
  imports: {
    '@vega/job-core': '/pkg/job-core/dist/index.js',
    '@vega/job-coordination': '/pkg/job-coordination/dist/index.js',
    '@vega/job-devtools-protocol': '/pkg/job-devtools-protocol/dist/index.js',
    '@vega/job-devtools': '/pkg/job-devtools/dist/index.js',
    '@vega/job-devtools/production': '/pkg/job-devtools/dist/production.js',
  },
})

/** Serves `e2e/pages` at `/` and the packages' `dist` folders at `/pkg/<name>/dist/`, on loopback. */
export function serveTestPages(): Promise<FileServer> {
  return serveFiles(
    (pathname) => {
      const [, area, name, dist, ...rest] = pathname.split('/')
      const file =
        area === 'pkg' && dist === 'dist' && name !== undefined
          ? normalize(join(PACKAGES, name, 'dist', ...rest))
          : normalize(join(PAGES, pathname === '/' ? 'app.html' : pathname))
      const inside = file.startsWith(PACKAGES + sep) || file.startsWith(PAGES + sep)
      return inside ? file : undefined
    },
    {
      transform: (file, body) =>
        file.endsWith('.html') ? body.toString().replace('{ "imports": {} }', IMPORT_MAP) : body,
    },
  )
}
