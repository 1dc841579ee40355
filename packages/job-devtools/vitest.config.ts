import { fileURLToPath } from 'node:url'
import { defineConfig } from 'vitest/config'

export default defineConfig({
  resolve: {
    // The README's examples import the package by name; run them against the source.
    alias: {
      '@vega/job-devtools/server': fileURLToPath(new URL('./src/server.ts', import.meta.url)),
    },
  },
  test: {
    include: ['test/**/*.test.ts'],
    // Generous limits: CI shares two cores between packages; no test asserts speed.
    testTimeout: 60_000,
    hookTimeout: 60_000,
  },
})
