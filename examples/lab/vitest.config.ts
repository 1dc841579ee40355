import { defineConfig } from 'vitest/config'

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    // Real time: a scenario sleeps for real, and CI shares two cores between
    // packages; generous limits, and no test asserts speed.
    testTimeout: 60_000,
    hookTimeout: 60_000,
  },
})
