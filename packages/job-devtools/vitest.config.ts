import { defineConfig } from 'vitest/config'

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    // Generous limits: CI shares two cores between packages; no test asserts speed.
    testTimeout: 60_000,
    hookTimeout: 60_000,
  },
})
