import { defineConfig } from 'vitest/config'

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    // Every file starts its own Postgres; on two shared cores they run one at a time.
    fileParallelism: false,
    // Generous limits: CI shares two cores between packages; no test asserts speed.
    testTimeout: 60_000,
    hookTimeout: 60_000,
  },
})
