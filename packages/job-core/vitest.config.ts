import { readFileSync } from 'node:fs'
import { defineConfig } from 'vitest/config'

const { version } = JSON.parse(readFileSync(new URL('./package.json', import.meta.url), 'utf8'))

export default defineConfig({
  define: { __PACKAGE_VERSION__: JSON.stringify(version), __MODULE_FORMAT__: '"source"' },
  test: {
    include: ['test/**/*.test.ts'],
    // Generous limits: CI shares two cores between packages; no test asserts speed.
    testTimeout: 60_000,
    hookTimeout: 60_000,
  },
})
