import { describe, expect, it } from 'vitest'
import { parseCliArgs, USAGE, useColor } from '../src/cli.js'
import { cli, labJson } from './support.js'

const ESC = '\u001b['

describe('flags', () => {
  it('defaults: all eight strategies, 4 calls, 50 ms, tables', () => {
    expect(parseCliArgs([])).toEqual({
      strategies: [
        { name: 'none' },
        { name: 'dedupe' },
        { name: 'restart' },
        { name: 'serialize' },
        { name: 'exhaust' },
        { name: 'keepLatest' },
        { name: 'bounded', limit: 2 },
        { name: 'forgetful' },
      ],
      calls: 4,
      duration: 50,
      json: false,
      cost: false,
      help: false,
    })
  })

  it('--strategy takes a list; bounded takes its limit as bounded:N, bounded(N) or --limit', () => {
    expect(
      parseCliArgs(['--strategy', 'restart, bounded:1,bounded(3),bounded', '--limit', '4'])
        .strategies,
    ).toEqual([
      { name: 'restart' },
      { name: 'bounded', limit: 1 },
      { name: 'bounded', limit: 3 },
      { name: 'bounded', limit: 4 },
    ])
  })

  it('accepts the `--` that `pnpm lab -- …` forwards', () => {
    expect(parseCliArgs(['--', '--json', '--calls', '3'])).toMatchObject({ json: true, calls: 3 })
  })

  it.each([
    [['--strategy', 'debounce'], "--strategy: unknown strategy 'debounce'"],
    [['--calls', '0'], "--calls must be an integer from 1 to 1000, got '0'."],
    [['--calls', '2.5'], "--calls must be an integer from 1 to 1000, got '2.5'."],
    [['--duration=-5'], "--duration must be an integer from 0 to 60000, got '-5'."],
    [['--calls', '-1'], "--calls must be an integer from 1 to 1000, got '-1'."],
    [['--', '--duration', '-5'], "--duration must be an integer from 0 to 60000, got '-5'."],
    [['--limit', '-2'], "--limit must be an integer from 1 to 1000, got '-2'."],
    [['--strategy', 'bounded:0'], "bounded:N must be an integer from 1 to 1000, got '0'."],
    [['--colour'], "Unknown option '--colour'"],
  ])('rejects %j with exit code 2 and a message on stderr', async (argv, message) => {
    const run = await cli(argv)
    expect(run.code).toBe(2)
    expect(run.stdout).toBe('')
    expect(run.stderr).toContain(message)
    expect(run.stderr).toContain('Run with --help for the options.')
  })

  it('--help prints the usage, documenting every flag', async () => {
    const run = await cli(['--help'])
    expect(run).toEqual({ code: 0, stdout: USAGE, stderr: '' })
    for (const flag of ['--strategy', '--calls', '--duration', '--limit', '--json', '--cost']) {
      expect(USAGE).toContain(flag)
    }
  })
})

describe('--calls and --duration reach the scenario', () => {
  it('dedupe with 6 calls: one body, five reuses, every promise gets #1’s value', async () => {
    const document = await labJson('--strategy', 'dedupe', '--calls', '6', '--duration', '10')
    expect(document.options).toEqual({ calls: 6, duration: 10, strategies: ['dedupe'] })
    const [run] = document.runs
    expect(run?.calls).toBe(6)
    expect(run?.duration).toBe(10)
    expect(run?.executions).toBe(1)
    expect(run?.events.map((event) => [event.type, event.intentId])).toEqual([
      ['coordination:reuse', 2],
      ['coordination:reuse', 3],
      ['coordination:reuse', 4],
      ['coordination:reuse', 5],
      ['coordination:reuse', 6],
    ])
    expect(run?.promises.map((promise) => promise.status === 'resolved' && promise.value)).toEqual([
      1, 1, 1, 1, 1, 1,
    ])
  })

  it('bounded:3 with 5 calls: three bodies, #4 and #5 reuse #1', async () => {
    const [run] = (await labJson('--strategy', 'bounded:3', '--calls', '5', '--duration', '10'))
      .runs
    expect(run?.strategy).toBe('bounded(3)')
    expect(run?.bodies).toEqual([1, 2, 3])
    expect(run?.tasks.map((task) => task.cancelReason ?? task.state)).toEqual([
      'success',
      'success',
      'success',
      'dedupe',
      'dedupe',
    ])
  })

  it('a single call has no peers: every strategy but forgetful runs it', async () => {
    const document = await labJson('--calls', '1', '--duration', '0')
    expect(document.runs.map((run) => [run.strategy, run.executions, run.events.length])).toEqual([
      ['none', 1, 0],
      ['dedupe', 1, 0],
      ['restart', 1, 0],
      ['serialize', 1, 0],
      ['exhaust', 1, 0],
      ['keepLatest', 1, 0],
      ['bounded(2)', 1, 0],
      ['forgetful', 0, 1],
    ])
  })
})

describe('--cost', () => {
  it('the JSON carries what one call of each strategy costs, next to a plain task measured in the same rounds', async () => {
    const document = await labJson('--strategy', 'serialize,exhaust', '--calls', '2', '--cost')
    expect(document.runs.map((run) => run.strategy)).toEqual(['serialize', 'exhaust'])
    expect(document.costs?.map((cost) => cost.strategy)).toEqual(['serialize', 'exhaust'])
    for (const cost of document.costs ?? []) {
      expect(cost).toMatchObject({ burstCalls: 4000, uncontendedCalls: 1000, keys: 100, rounds: 7 })
      const figures = [
        cost.burstNs,
        cost.uncontendedNs,
        cost.plainTask.burstNs,
        cost.plainTask.uncontendedNs,
        cost.vsPlainTask.burst,
        cost.vsPlainTask.uncontended,
      ]
      for (const figure of figures) {
        expect(Number.isFinite(figure) && figure > 0, `${cost.strategy}: ${figure}`).toBe(true)
      }
    }
  }, 60_000)

  it('the tables end with a cost-per-call table, one row per strategy; without --cost nothing is measured', async () => {
    const run = await cli(['--strategy', 'keepLatest', '--calls', '2', '--cost'])
    expect(run.code).toBe(0)
    const table = run.stdout.slice(run.stdout.indexOf('cost per call'))
    expect(table).toMatch(/strategy\s+burst\s+vs plain task\s+one after another\s+vs plain task/)
    expect(table).toMatch(/keepLatest\s+[\d.]+ µs\s+[\d.]+×\s+[\d.]+ µs\s+[\d.]+×/)
    const plain = await labJson('--strategy', 'keepLatest', '--calls', '2')
    expect(plain.costs).toBeUndefined()
    expect((await cli(['--strategy', 'keepLatest', '--calls', '2'])).stdout).not.toContain(
      'cost per call',
    )
  }, 60_000)
})

describe('the tables', () => {
  it('show bodies, task states with reasons, promise outcomes, events and one lane per call', async () => {
    const run = await cli(['--strategy', 'dedupe'])
    expect(run.code).toBe(0)
    const all = run.stdout.split('\n')
    // The intro explains the scenario, merged calls and the lanes before any lane is drawn.
    expect(all.slice(0, 7)).toEqual([
      '@vega/lab · what a coordinator does with repeated calls: 4 calls with one key,',
      "issued back-to-back on a real runtime; call i's body sleeps 50 ms and returns i.",
      'A call merged into another ends "cancelled" (its own body never ran) yet its',
      "promise resolves with the other call's value: the task state says what",
      'happened to the call, the promise what its caller gets.',
      'lanes: one row per call, time left to right: = running  ~ parked (waiting)  . queued  o success  x cancelled  ! error  - a cancelled body still inside',
      '',
    ])
    const lines = all.slice(7)
    expect(lines[0]).toMatch(
      /^== dedupe {2}coordinator "dedupe" · 4 calls on key "k" · body sleeps 50 ms · took \d+ ms$/,
    )
    // What a user would use it for, and why a joined call's promise still resolves.
    expect(lines.slice(1, 5).join(' ')).toBe(
      "  One body per key at a time; later calls join the one in flight. Use it for   reads (load a user, fetch a document): a joined call ends cancelled (dedupe)   but resolves with the running call's value, the same answer it would have   fetched.",
    )
    expect(lines.slice(6, 19)).toEqual([
      '  bodies run: 1  (#1)',
      '',
      '  call  task state                 promise',
      '  #1    success                    resolved 1',
      '  #2    cancelled (dedupe, by #1)  resolved 1',
      '  #3    cancelled (dedupe, by #1)  resolved 1',
      '  #4    cancelled (dedupe, by #1)  resolved 1',
      '',
      '  events:',
      '    coordination:reuse  [dedupe]  #2 reuses #1',
      '    coordination:reuse  [dedupe]  #3 reuses #1',
      '    coordination:reuse  [dedupe]  #4 reuses #1',
      '',
    ])
    const lanes = lines.filter((line) => /^ {2}#\d +\[/.test(line))
    expect(lanes).toHaveLength(4)
    expect(lanes[0]).toMatch(/^ {2}#1 +\[[ .=]*=+o *\] success$/)
    for (const [index, lane] of lanes.slice(1).entries()) {
      expect(lane).toMatch(
        new RegExp(
          `^ {2}#${index + 2} +\\[ *x *\\] cancelled \\(dedupe, by #1\\) {2}· dedupe: reuses #1$`,
        ),
      )
    }
    expect(run.stdout).toContain('summary')
    expect(run.stdout).toMatch(
      /\n {2}dedupe +1 +success, cancelled dedupe ×3 +1 ×4 +reuse \[dedupe\] ×3\n/,
    )
  })

  it('say "1 call", and say when the axis is one body wide because every call ended at once', async () => {
    const run = await cli(['--strategy', 'forgetful', '--calls', '1'])
    expect(run.code).toBe(0)
    expect(run.stdout).toContain('1 call with one key,')
    expect(run.stdout).toMatch(/== forgetful {2}coordinator "forgetful" · 1 call on key "k" ·/)
    expect(run.stdout).not.toMatch(/\b1 calls\b/)
    expect(run.stdout).toMatch(
      /\n {2}lanes 0 ms +50 ms {2}\(axis = one body's 50 ms; every call ended within \d+ ms\)\n/,
    )
    // A run longer than one body needs no such note.
    expect((await cli(['--strategy', 'serialize', '--calls', '2'])).stdout).not.toContain('axis =')
  })

  it('have no colors when stdout is not a terminal, and colors on a terminal', async () => {
    expect((await cli(['--strategy', 'none', '--duration', '1'])).stdout).not.toContain(ESC)
    expect(
      (await cli(['--strategy', 'none', '--duration', '1'], { isTTY: true })).stdout,
    ).toContain(ESC)
  })

  it('honour NO_COLOR and FORCE_COLOR', () => {
    expect(useColor({ isTTY: true, env: {} })).toBe(true)
    expect(useColor({ isTTY: false, env: {} })).toBe(false)
    expect(useColor({ isTTY: true, env: { NO_COLOR: '1' } })).toBe(false)
    expect(useColor({ isTTY: false, env: { FORCE_COLOR: '1' } })).toBe(true)
    expect(useColor({ isTTY: true, env: { FORCE_COLOR: '0' } })).toBe(true)
    expect(useColor({ isTTY: false, env: { FORCE_COLOR: '0' } })).toBe(false)
  })
})
