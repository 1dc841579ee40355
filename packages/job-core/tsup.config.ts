import { readFileSync } from 'node:fs'
import { defineConfig } from 'tsup'

const { version } = JSON.parse(readFileSync(new URL('./package.json', import.meta.url), 'utf8'))

export default defineConfig({
  entry: ['src/index.ts'],
  format: ['esm', 'cjs'],
  dts: true,
  sourcemap: true,
  clean: true,
  target: 'es2022',
  treeshake: true,
  define: { __PACKAGE_VERSION__: JSON.stringify(version) },
  // Each build names its own format, so an error about a runtime from the
  // other build (ESM and CJS both loaded) can say which copy is which.
  esbuildOptions(options, context) {
    options.define = { ...options.define, __MODULE_FORMAT__: JSON.stringify(context.format) }
  },
})
