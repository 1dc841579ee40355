import { defineConfig } from 'tsup'

// The UI is a separate chunk: `mountDevtools` loads it with `import()` on
// first open, so a closed panel ships (and parses) none of it.
export default defineConfig([
  {
    entry: ['src/index.ts', 'src/production.ts', 'src/server.ts'],
    format: ['esm', 'cjs'],
    dts: true,
    sourcemap: true,
    clean: false,
    target: 'es2022',
    treeshake: true,
    splitting: true,
    // `import.meta.url` in the CJS build of the server entry.
    shims: true,
  },
  {
    entry: ['src/bin.ts'],
    format: ['esm'],
    sourcemap: true,
    target: 'es2022',
    banner: { js: '#!/usr/bin/env node' },
  },
])
