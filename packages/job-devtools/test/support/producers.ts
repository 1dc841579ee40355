import { type ChildProcess, spawn } from 'node:child_process'
import { fileURLToPath } from 'node:url'

const PRODUCER = fileURLToPath(new URL('./producer.mjs', import.meta.url))

export interface Producer {
  readonly child: ChildProcess
  /** Resolves once the process ran its tasks. */
  readonly ran: Promise<void>
  /** Asks the process to disconnect and waits for it to exit; resolves with its exit code. */
  stop(): Promise<number | null>
}

/** Starts `test/support/producer.mjs`: a separate Node process sending to the relay. */
export function startProducer(relayUrl: string, name: string, calls: number): Producer {
  const child = spawn(process.execPath, [PRODUCER, relayUrl, name, String(calls)], {
    stdio: ['pipe', 'pipe', 'inherit'],
  })
  const exited = new Promise<number | null>((done) => child.once('exit', (code) => done(code)))
  const ran = new Promise<void>((done, fail) => {
    child.stdout?.on('data', (chunk) => {
      if (String(chunk).includes('ran')) done()
    })
    child.once('exit', (code) =>
      fail(new Error(`producer ${name} exited with ${code} before running`)),
    )
  })
  return {
    child,
    ran,
    stop: () => {
      child.stdin?.write('exit\n')
      return exited
    },
  }
}
