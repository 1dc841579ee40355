import { defineConfig } from 'vitest/config'

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    // Real time: a scenario sleeps for real, so leave room on a busy machine.
    testTimeout: 30_000,
  },
})
