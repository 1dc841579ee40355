import { defineConfig } from 'vite'

// The page lives in web/; `vite build` writes it to dist/web with relative
// URLs, so any static server (the e2e test's, a file share) can serve it.
export default defineConfig({
  root: 'web',
  base: './',
  build: {
    outDir: '../dist/web',
    emptyOutDir: true,
    target: 'es2022',
  },
  server: { host: '127.0.0.1' },
  preview: { host: '127.0.0.1' },
})
