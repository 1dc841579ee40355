// Replaced at build time by tsup (and by vitest's `define`) with the
// package.json version, so the bundle never reads package.json at run time.
declare const __PACKAGE_VERSION__: string

export const PACKAGE_NAME = '@vega/job-devtools-protocol'

export const PACKAGE_VERSION: string =
  typeof __PACKAGE_VERSION__ === 'string' ? __PACKAGE_VERSION__ : '0.0.0-dev'
