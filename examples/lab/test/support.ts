import { type CliIo, type LabDocument, main } from '../src/cli.js'

export interface CliRun {
  readonly code: number
  readonly stdout: string
  readonly stderr: string
}

/** Runs the CLI exactly as the bin does, with its output captured. */
export async function cli(
  argv: readonly string[],
  io: Partial<Pick<CliIo, 'isTTY' | 'env'>> = {},
): Promise<CliRun> {
  let stdout = ''
  let stderr = ''
  const code = await main(argv, {
    stdout: (text) => {
      stdout += text
    },
    stderr: (text) => {
      stderr += text
    },
    isTTY: io.isTTY ?? false,
    env: io.env ?? {},
  })
  return { code, stdout, stderr }
}

/** `--json` output, parsed; fails loudly if the CLI did not exit 0 or wrote to stderr. */
export async function labJson(...args: string[]): Promise<LabDocument> {
  const { code, stdout, stderr } = await cli(['--json', ...args])
  if (code !== 0 || stderr !== '') throw new Error(`lab exited ${code}: ${stderr}`)
  return JSON.parse(stdout) as LabDocument
}
