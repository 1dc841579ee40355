import { afterEach, beforeEach, expect, vi } from 'vitest'

// Tell React that every update goes through act(): any update that does not
// is reported with a console.error, which the spy below turns into a failure.
;(globalThis as { IS_REACT_ACT_ENVIRONMENT?: boolean }).IS_REACT_ACT_ENVIRONMENT = true

let consoleError: ReturnType<typeof vi.spyOn>

beforeEach(() => {
  consoleError = vi.spyOn(console, 'error')
})

afterEach(() => {
  const calls = consoleError.mock.calls.map((args: unknown[]) => args.map(String).join(' '))
  consoleError.mockRestore()
  // No act() warning, no "update on an unmounted component", no unobserved error.
  expect(calls).toEqual([])
})
