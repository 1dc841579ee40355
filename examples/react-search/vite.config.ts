import { defineConfig } from 'vite'

// The app lives in web/; `vite build` writes it to dist/ with relative URLs.
// `vite` serves it in development (React's development build: StrictMode
// replays every mount), `vite preview` serves the production build.
export default defineConfig(({ mode }) => ({
  root: 'web',
  resolve: {
    // Production builds get the devtools' no-op entry: same exports, no UI.
    // A regular expression, so `@vega/job-devtools/production` itself is left alone.
    alias:
      mode === 'production'
        ? [{ find: /^@vega\/job-devtools$/, replacement: '@vega/job-devtools/production' }]
        : [],
  },
  base: './',
  oxc: { jsx: { runtime: 'automatic' } },
  build: {
    outDir: '../dist',
    emptyOutDir: true,
    target: 'es2022',
  },
  // Optimized at start-up, so the first page load never triggers a reload.
  optimizeDeps: {
    include: ['react', 'react/jsx-dev-runtime', 'react/jsx-runtime', 'react-dom/client'],
  },
  server: { host: '127.0.0.1' },
  preview: { host: '127.0.0.1' },
}))
