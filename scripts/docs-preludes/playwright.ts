// prelude=playwright (type-checked fragments only): a test's assertions and
// the Playwright page it drives, as declarations.
import assert from 'node:assert/strict'

declare const page: import('playwright-core').Page
