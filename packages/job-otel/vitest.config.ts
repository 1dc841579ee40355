import { fileURLToPath } from 'node:url'
import { defineConfig } from 'vitest/config'

export default defineConfig({
  // The README's examples import the package by name; run them against the source.
  resolve: {
    alias: {
      '@vega/job-otel': fileURLToPath(new URL('./src/index.ts', import.meta.url)),
    },
  },
  define: { __PACKAGE_VERSION__: JSON.stringify('0.0.0-test') },
  test: {
    include: ['test/**/*.test.ts'],
    // Generous limits: CI shares two cores between packages; no test asserts speed.
    testTimeout: 60_000,
    hookTimeout: 60_000,
  },
})
