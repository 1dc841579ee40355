import { type Envelope, isEnvelope } from '../envelope.js'
import type { Transport } from '../transport.js'

/**
 * Where NDJSON text goes: a Node `Writable`, `process.stdout`, or anything
 * with a `write(chunk)` method.
 *
 * @example
 * ```ts
 * const sink: NdjsonSink = createWriteStream('run.ndjson')
 * ```
 */
export interface NdjsonSink {
  write(chunk: string): unknown
}

/**
 * A recording transport: each batch is written as one chunk of NDJSON (one
 * envelope per line, `\n`-terminated). Replay it with {@link parseNdjson} and
 * `reduceAll`.
 *
 * @example
 * ```ts
 * const file = createWriteStream('run.ndjson')
 * const disconnect = connectDevtools(runtime, createNdjsonTransport(file), { flushMs: 100 })
 * // later
 * disconnect()
 * file.end()
 * ```
 */
export function createNdjsonTransport(sink: NdjsonSink | ((chunk: string) => void)): Transport {
  const write =
    typeof sink === 'function'
      ? sink
      : typeof sink === 'object' && sink !== null && typeof sink.write === 'function'
        ? (chunk: string) => {
            sink.write(chunk)
          }
        : undefined
  if (write === undefined) {
    throw new TypeError(
      'createNdjsonTransport(sink): sink must be a function or have a write(chunk) method.',
    )
  }
  return { send: (batch) => write(formatNdjson(batch)) }
}

/**
 * Formats envelopes as NDJSON: one `JSON.stringify` per line, each line
 * ending with `\n`. The output of a deterministic run is byte-for-byte stable.
 *
 * @example
 * ```ts
 * writeFileSync('fixture.ndjson', formatNdjson(recorded))
 * ```
 */
export function formatNdjson(envelopes: Iterable<Envelope>): string {
  let out = ''
  for (const envelope of envelopes) out += `${JSON.stringify(envelope)}\n`
  return out
}

/**
 * Parses one NDJSON line. Returns `undefined` for a blank line; throws a
 * `SyntaxError` for invalid JSON and a `TypeError` for JSON that is not a v1
 * envelope (another major version cannot be read by this one).
 *
 * @example
 * ```ts
 * for await (const line of createInterface({ input: createReadStream('run.ndjson') })) {
 *   const envelope = parseNdjsonLine(line)
 *   if (envelope) state = reduce(state, envelope)
 * }
 * ```
 */
export function parseNdjsonLine(line: string, lineNumber?: number): Envelope | undefined {
  const text = line.trim()
  if (text === '') return undefined
  const where = lineNumber === undefined ? 'NDJSON line' : `NDJSON line ${lineNumber}`
  let value: unknown
  try {
    value = JSON.parse(text)
  } catch (error) {
    throw new SyntaxError(`${where} is not valid JSON: ${(error as Error).message}`)
  }
  if (!isEnvelope(value)) {
    const v = (value as { v?: unknown } | null)?.v
    throw new TypeError(
      `${where} is not a vega-job v1 envelope${v !== undefined && v !== 1 ? ` (it has v: ${JSON.stringify(v)})` : ''}.`,
    )
  }
  return value
}

/**
 * Parses a whole NDJSON recording. Blank lines are skipped; `\r\n` line ends
 * are accepted; the first bad line throws (see {@link parseNdjsonLine}) with
 * its line number.
 *
 * @example
 * ```ts
 * const envelopes = parseNdjson(readFileSync('run.ndjson', 'utf8'))
 * const state = reduceAll(envelopes)
 * ```
 */
export function parseNdjson(text: string): Envelope[] {
  if (typeof text !== 'string') throw new TypeError('parseNdjson(text): text must be a string.')
  const out: Envelope[] = []
  const lines = text.split('\n')
  for (let index = 0; index < lines.length; index += 1) {
    const envelope = parseNdjsonLine(lines[index] as string, index + 1)
    if (envelope !== undefined) out.push(envelope)
  }
  return out
}

/**
 * An incremental NDJSON reader for streamed input: chunks may split lines
 * anywhere.
 *
 * @example
 * ```ts
 * const parser: NdjsonParser = createNdjsonParser((envelope) => apply(envelope))
 * socket.on('data', (chunk) => parser.push(String(chunk)))
 * socket.on('end', () => parser.end())
 * ```
 */
export interface NdjsonParser {
  /** Feeds text; complete lines are parsed at once. */
  push(chunk: string): void
  /** Parses what is left after the last newline. */
  end(): void
}

/**
 * Creates an {@link NdjsonParser}. Each envelope goes to `onEnvelope` in
 * order. A bad line is passed to `onError` when given (and parsing goes on),
 * otherwise its error is thrown from `push`/`end`.
 *
 * @example
 * ```ts
 * let state = initialState()
 * const parser = createNdjsonParser((envelope) => {
 *   state = reduce(state, envelope)
 * }, (error) => console.warn(error.message))
 * process.stdin.on('data', (chunk) => parser.push(String(chunk)))
 * ```
 */
export function createNdjsonParser(
  onEnvelope: (envelope: Envelope) => void,
  onError?: (error: Error) => void,
): NdjsonParser {
  if (typeof onEnvelope !== 'function') {
    throw new TypeError('createNdjsonParser(onEnvelope): onEnvelope must be a function.')
  }
  let pending = ''
  let lineNumber = 0
  const parseLine = (line: string): void => {
    lineNumber += 1
    let envelope: Envelope | undefined
    try {
      envelope = parseNdjsonLine(line, lineNumber)
    } catch (error) {
      if (onError === undefined) throw error
      onError(error as Error)
      return
    }
    if (envelope !== undefined) onEnvelope(envelope)
  }
  return {
    push(chunk) {
      pending += chunk
      let newline = pending.indexOf('\n')
      while (newline !== -1) {
        const line = pending.slice(0, newline)
        pending = pending.slice(newline + 1)
        parseLine(line)
        newline = pending.indexOf('\n')
      }
    },
    end() {
      const rest = pending
      pending = ''
      if (rest !== '') parseLine(rest)
    },
  }
}
