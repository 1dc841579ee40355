import { afterEach, beforeEach, expect, vi } from 'vitest'

// Vue's warnings go to the app's warnHandler (see support.ts), which records
// them; anything printed with console.error or console.warn (an unobserved
// task error, a warning from outside an app) fails the test too.
let consoleError: ReturnType<typeof vi.spyOn>
let consoleWarn: ReturnType<typeof vi.spyOn>

beforeEach(() => {
  consoleError = vi.spyOn(console, 'error')
  consoleWarn = vi.spyOn(console, 'warn')
})

afterEach(() => {
  const printed = [...consoleError.mock.calls, ...consoleWarn.mock.calls].map((args: unknown[]) =>
    args.map(String).join(' '),
  )
  consoleError.mockRestore()
  consoleWarn.mockRestore()
  expect(printed).toEqual([])
})
