import { defineConfig } from 'vite'

// The app lives in web/; `vite build` writes it to dist/ with relative URLs.
// `vite` serves it in development, `vite preview` serves the production build.
export default defineConfig(({ mode }) => ({
  root: 'web',
  resolve: {
    // Production builds get the devtools' no-op entry: the Performance panel
    // tracks install nothing there. A regular expression, so
    // `@vega/job-devtools/production` itself is left alone.
    alias:
      mode === 'production'
        ? [{ find: /^@vega\/job-devtools$/, replacement: '@vega/job-devtools/production' }]
        : [],
  },
  // Vue's compile-time flags, set as its esm-bundler build asks: the options
  // API stays on (defineComponent), no devtools hooks or hydration details in production.
  define: {
    __VUE_OPTIONS_API__: 'true',
    __VUE_PROD_DEVTOOLS__: 'false',
    __VUE_PROD_HYDRATION_MISMATCH_DETAILS__: 'false',
  },
  base: './',
  build: {
    outDir: '../dist',
    emptyOutDir: true,
    target: 'es2022',
  },
  // Optimized at start-up, so the first page load never triggers a reload.
  optimizeDeps: { include: ['vue'] },
  server: { host: '127.0.0.1' },
  preview: { host: '127.0.0.1' },
}))
