// Two copies of @vega/job-core in one process (its ESM and CJS builds both
// loaded, as a dual-package app can end up with): a runtime made by one copy
// is refused by the other with an error that names both copies.

import assert from 'node:assert/strict'
import { createRequire } from 'node:module'
import { test } from 'node:test'

const require = createRequire(import.meta.url)
const esm = await import('../packages/job-core/dist/index.js')
const cjs = require('../packages/job-core/dist/index.cjs')

test('a runtime from the CJS copy, handed to the ESM copy, gets an error naming both copies', () => {
  const runtime = cjs.createRuntime({ name: 'from-cjs' })
  assert.throws(
    () => esm.run(runtime, async () => 1),
    (error) =>
      error instanceof TypeError &&
      error.message.includes(`another copy of the package, @vega/job-core@${cjs.VERSION} (cjs)`) &&
      error.message.includes(`this is @vega/job-core@${esm.VERSION} (esm)`),
  )
  // Each copy still serves its own runtimes.
  return cjs.run(runtime, async () => 'ok').promise.then((value) => assert.equal(value, 'ok'))
})

test('and the other way round', () => {
  const runtime = esm.createRuntime()
  assert.throws(
    () => cjs.inspect(runtime),
    /another copy of the package, @vega\/job-core@[^ ]+ \(esm\)/,
  )
})
