import { defineConfig } from 'vitest/config'

// `pnpm test:e2e`: the app in Debian's headless Chromium, on Vite's dev
// server and on the production build.
export default defineConfig({
  test: {
    include: ['e2e/**/*.e2e.ts'],
    testTimeout: 120_000,
    hookTimeout: 60_000,
    fileParallelism: false,
  },
})
