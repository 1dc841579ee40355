import { defineConfig } from 'tsup'

// The CLI only; the @vega/* packages stay external, so the lab runs them
// through their public entries (their built dist), as a user would.
export default defineConfig({
  entry: { cli: 'src/bin.ts' },
  format: ['esm'],
  target: 'node20',
  platform: 'node',
  sourcemap: true,
  clean: true,
})
