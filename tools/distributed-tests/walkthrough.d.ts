/** Registers the README bus walkthrough's tests: its one `mjs` program, run as two workers and a producer. */
export function describeBusWalkthrough(options: {
  /** The package's README. */
  readonly readme: URL
  /** A folder inside the package (so the package's name resolves to itself), ignored by git. */
  readonly dir: URL
  /** The variables the program reads to reach the test server, asked once it runs. */
  readonly env: () => Record<string, string>
}): void
