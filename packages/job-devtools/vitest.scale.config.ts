import { defineConfig } from 'vitest/config'

// `pnpm bench:scale`: the scale lines of bench/README.md, measured in Chromium.
export default defineConfig({
  test: {
    include: ['e2e/**/*.measure.ts'],
    testTimeout: 300_000,
    hookTimeout: 60_000,
    fileParallelism: false,
  },
})
