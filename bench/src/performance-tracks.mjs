// What installPerformanceTracks costs where it draws: the tasks scenario
// (trivial async tasks, concurrency 16, one burst) in Debian's headless
// Chromium, on a runtime without tracks, with tracks installed, and with
// tracks installed while the DevTools protocol records a trace (what a
// developer's Performance panel does while it records). Rounds are
// interleaved; medians and the ratio to "without" are printed, and the cost
// per runtime event is (with - without) / events.
//
// In Node the tracks install nothing (no listener): its row in the events
// scenario would equal "0 listeners" by construction, so it is not measured.
//
//   pnpm turbo run build --filter=@vega/job-devtools... && pnpm --filter @vega/bench tracks
import { join, normalize, resolve, sep } from 'node:path'
import { fileURLToPath } from 'node:url'
import { keepOffline, launchChromium, serveFiles } from '@vega/browser'
import { median, parseArgs, round3 } from './harness.mjs'

const PACKAGES = resolve(fileURLToPath(new URL('../../packages', import.meta.url)))
const PAGES = resolve(fileURLToPath(new URL('./pages', import.meta.url)))
const IMPORT_MAP = JSON.stringify({
  imports: {
    '@vega/job-core': '/pkg/job-core/dist/index.js',
    '@vega/job-devtools-protocol': '/pkg/job-devtools-protocol/dist/index.js',
    '@vega/job-devtools': '/pkg/job-devtools/dist/index.js',
  },
})

const options = parseArgs(process.argv.slice(2))
const N = options.quick ? 20_000 : 100_000
const rounds = options.rounds ?? (options.quick ? 3 : 7)
const warmup = options.warmup ?? 1

const server = await serveFiles(
  (pathname) => {
    const [, area, name, dist, ...rest] = pathname.split('/')
    const file =
      area === 'pkg' && dist === 'dist' && name !== undefined
        ? normalize(join(PACKAGES, name, 'dist', ...rest))
        : normalize(join(PAGES, pathname === '/' ? 'performance-tracks.html' : pathname))
    return file.startsWith(PACKAGES + sep) || file.startsWith(PAGES + sep) ? file : undefined
  },
  {
    transform: (file, body) =>
      file.endsWith('.html') ? body.toString().replace('{ "imports": {} }', IMPORT_MAP) : body,
  },
)
const browser = await launchChromium(['--js-flags=--expose-gc'])
try {
  const context = await browser.newContext()
  const refused = await keepOffline(context)
  const page = await context.newPage()
  await page.goto(server.url)
  await page.waitForFunction(() => window.benchReady === true)
  if (!(await page.evaluate(() => window.bench.supported))) {
    throw new Error('the page does not support performance tracks: not a Chromium?')
  }
  const cdp = await context.newCDPSession(page)

  const peers = {
    'without tracks': () => page.evaluate((n) => window.bench.tasks(n, false), N),
    'tracks installed (not recording)': () => page.evaluate((n) => window.bench.tasks(n, true), N),
    'tracks installed, trace recording': async () => {
      const done = new Promise((r) => cdp.once('Tracing.tracingComplete', r))
      cdp.on('Tracing.dataCollected', () => {})
      await cdp.send('Tracing.start', {
        transferMode: 'ReturnAsStream',
        traceConfig: { includedCategories: ['blink.user_timing', 'devtools.timeline'] },
      })
      const result = await page.evaluate((n) => window.bench.tasks(n, true), N)
      await cdp.send('Tracing.end')
      const { stream } = await done
      if (stream !== undefined) await cdp.send('IO.close', { handle: stream })
      return result
    },
  }
  const names = Object.keys(peers)
  const times = Object.fromEntries(names.map((name) => [name, []]))
  let events = 0
  for (let round = 0; round < warmup + rounds; round++) {
    for (let i = 0; i < names.length; i++) {
      const name = names[(i + round) % names.length]
      await page.evaluate(() => globalThis.gc?.())
      await new Promise((r) => setTimeout(r, 5))
      const result = await peers[name]()
      events = result.events
      if (round >= warmup) times[name].push(result.ms)
    }
  }
  if (refused.length > 0) throw new Error(`requests left loopback: ${refused.join(', ')}`)
  const base = median(times['without tracks'])
  console.log(
    `performance tracks, tasks scenario in Chromium: ${N} tasks, ${events} events per run, ${rounds} rounds`,
  )
  console.log('| peer | median ms | ratio | ns per event over "without" |')
  console.log('| --- | ---: | ---: | ---: |')
  for (const name of names) {
    const ms = median(times[name])
    const perEvent =
      name === 'without tracks' ? '' : String(Math.round(((ms - base) * 1e6) / events))
    console.log(`| ${name} | ${round3(ms)} | ${round3(ms / base)}× | ${perEvent} |`)
  }
} finally {
  await browser.close()
  await server.close()
}
