// The one place the repository starts a Postgres of its own (job-postgres's
// tests, the bench's postgres scenarios, the postgres lab): Debian's
// `postgresql` binaries, a cluster initialised into a temporary folder, a
// free loopback port, fsync off, never a mock.
//
// Postgres refuses to run as root (CI runs as root): the folder is then
// handed to the `postgres` user and every binary runs through `runuser`.
// `synchronous_commit` stays on, so a commit acknowledged before an
// immediate stop (a crash) is still there after the restart.

import { execFile, execFileSync, spawnSync } from 'node:child_process'
import { chmodSync, existsSync, mkdirSync, mkdtempSync, readdirSync, rmSync } from 'node:fs'
import { createServer } from 'node:net'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { promisify } from 'node:util'

const INSTALL = 'apt-get install -y postgresql'
const ROOT = '/usr/lib/postgresql'
const MIN_MAJOR = 14

/** The bin folder of the newest Debian postgresql ≥ 14, or undefined. */
export function postgresBinDir() {
  if (!existsSync(ROOT)) return undefined
  const majors = readdirSync(ROOT)
    .map(Number)
    .filter((major) => Number.isInteger(major) && major >= MIN_MAJOR)
    .sort((a, b) => b - a)
  for (const major of majors) {
    const bin = join(ROOT, String(major), 'bin')
    if (existsSync(join(bin, 'pg_ctl')) && existsSync(join(bin, 'initdb'))) return bin
  }
  return undefined
}

/** Throws, with the one command to run, when no Postgres ≥ 14 is installed. */
export function requirePostgres(who = 'this command', alternative = '') {
  const bin = postgresBinDir()
  if (bin === undefined) {
    throw new Error(
      `${who} needs a real Postgres (≥ ${MIN_MAJOR}) and none was found under ${ROOT}. Install Debian's package: \`${INSTALL}\`${alternative === '' ? '' : ` ${alternative}`}.`,
    )
  }
  return bin
}

/** A loopback port nobody listens on right now. */
export function freePort() {
  return new Promise((resolve, reject) => {
    const server = createServer()
    server.unref()
    server.on('error', reject)
    server.listen(0, '127.0.0.1', () => {
      const address = server.address()
      server.close(() => resolve(address.port))
    })
  })
}

const asRoot = typeof process.getuid === 'function' && process.getuid() === 0

const execFileAsync = promisify(execFile)

/** A Postgres binary's command line, through `runuser -u postgres` when this process is root. */
function commandOf(bin, name, args) {
  const file = join(bin, name)
  return asRoot ? ['runuser', ['-u', 'postgres', '--', file, ...args]] : [file, args]
}

/** Runs a Postgres binary without blocking the event loop (a test's clients keep running meanwhile). */
async function runOrThrow(bin, name, args, what) {
  const [command, argv] = commandOf(bin, name, args)
  try {
    await execFileAsync(command, argv, { encoding: 'utf8' })
  } catch (error) {
    throw new Error(`${what} failed (${error.code}):\n${error.stdout ?? ''}${error.stderr ?? ''}`)
  }
}

/** The same, synchronously: for a process `exit` handler. */
function runSync(bin, name, args) {
  const [command, argv] = commandOf(bin, name, args)
  spawnSync(command, argv, { stdio: 'ignore' })
}

/**
 * Initialises a cluster in a temporary folder and starts it on a free
 * loopback port. Resolves once it accepts connections.
 */
export async function startPostgresServer(options = {}) {
  const { who, alternative, folderPrefix = 'vega-postgres-', settings = {} } = options
  const bin = requirePostgres(who, alternative)
  const port = await freePort()
  const dir = mkdtempSync(join(tmpdir(), folderPrefix))
  const data = join(dir, 'data')
  const log = join(dir, 'postgres.log')
  mkdirSync(data)
  if (asRoot) {
    // The postgres user must reach its folders through the temporary one.
    chmodSync(dir, 0o755)
    execFileSync('chown', ['-R', 'postgres:postgres', dir])
  }
  await runOrThrow(
    bin,
    'initdb',
    ['-D', data, '-U', 'postgres', '-A', 'trust', '-E', 'UTF8', '--no-sync', '--no-instructions'],
    'initdb',
  )
  const serverSettings = {
    listen_addresses: '127.0.0.1',
    port: String(port),
    unix_socket_directories: dir,
    fsync: 'off',
    full_page_writes: 'off',
    synchronous_commit: 'on',
    max_connections: '200',
    ...settings,
  }
  const flags = Object.entries(serverSettings)
    .map(([name, value]) => `-c ${name}=${value}`)
    .join(' ')

  let running = false
  const start = async () => {
    if (running) return
    const args = ['start', '-w', '-t', '60', '-D', data, '-l', log, '-o', flags]
    await runOrThrow(bin, 'pg_ctl', args, 'pg_ctl start')
    running = true
  }
  const stop = async (mode = 'fast') => {
    if (!running) return
    running = false
    const args = ['stop', '-w', '-t', '60', '-D', data, '-m', mode]
    await runOrThrow(bin, 'pg_ctl', args, `pg_ctl stop -m ${mode}`)
  }

  await start()
  return {
    port,
    url: `postgres://postgres@127.0.0.1:${port}/postgres`,
    dir,
    stop: (stopOptions = {}) => stop(stopOptions.mode ?? 'fast'),
    start,
    async restart(restartOptions = {}) {
      await stop(restartOptions.mode ?? 'fast')
      await start()
    },
    async dispose() {
      await stop('fast')
      rmSync(dir, { recursive: true, force: true })
    },
    killNow() {
      if (running) runSync(bin, 'pg_ctl', ['stop', '-w', '-D', data, '-m', 'immediate'])
      running = false
      rmSync(dir, { recursive: true, force: true })
    },
  }
}
