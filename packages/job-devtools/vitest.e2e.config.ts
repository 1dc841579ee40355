import { defineConfig } from 'vitest/config'

// `pnpm test:e2e`: the built panel in Debian's headless Chromium, and the standalone relay.
export default defineConfig({
  test: {
    include: ['e2e/**/*.e2e.ts'],
    testTimeout: 120_000,
    hookTimeout: 60_000,
    fileParallelism: false,
  },
})
