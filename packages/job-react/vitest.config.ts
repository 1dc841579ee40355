import { realpathSync } from 'node:fs'
import { dirname, join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { defineConfig } from 'vitest/config'

// Every test runs twice: on React 19 (the package's own devDependency) and on
// React 18.3, installed with its react-dom in test/react-18 so that this
// react-dom resolves that React. The `react-18` project points the bare
// specifiers there; the source and the tests import plain 'react'.
const react18Env = dirname(
  realpathSync(fileURLToPath(new URL('./node_modules/react-18-env/package.json', import.meta.url))),
)
const react18 = realpathSync(join(react18Env, '..', 'react'))
const reactDom18 = realpathSync(join(react18Env, '..', 'react-dom'))

const shared = {
  include: ['test/**/*.test.{ts,tsx}'],
  environment: 'jsdom',
  setupFiles: ['test/setup.ts'],
  // Generous limits: CI shares two cores between packages; no test asserts speed.
  testTimeout: 60_000,
  hookTimeout: 60_000,
}

export default defineConfig({
  // The README's examples import the package by name; run them against the source.
  resolve: {
    alias: {
      '@vega/job-react': fileURLToPath(new URL('./src/index.ts', import.meta.url)),
    },
  },
  oxc: { jsx: { runtime: 'automatic' } },
  test: {
    projects: [
      { extends: true, test: { ...shared, name: 'react-19' } },
      {
        extends: true,
        resolve: {
          alias: [
            { find: /^react-dom(\/.*)?$/, replacement: `${reactDom18}$1` },
            { find: /^react(\/.*)?$/, replacement: `${react18}$1` },
          ],
        },
        test: { ...shared, name: 'react-18' },
      },
    ],
  },
})
