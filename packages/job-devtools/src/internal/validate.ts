import type { DevtoolsSource, ResolvedOptions, Retention } from '../options.js'
import { DEFAULT_HOTKEY, parseHotkey } from './hotkey.js'

const WHERE = 'mountDevtools(options)'
const KNOWN = ['source', 'container', 'open', 'hotkey', 'position', 'record', 'retention']
const POSITIONS = ['bottom', 'top', 'left', 'right', 'fill']
const RECORD_MODES = ['always', 'while-open']
export const DEFAULT_RETENTION: Retention = { tasks: 5_000, events: 50_000 }
const INSPECTOR = Symbol.for('@vega/job-core/inspector')

/** A short, safe description of any value for an error message. */
export function describeValue(value: unknown): string {
  if (value === null) return 'null'
  if (typeof value === 'string') return JSON.stringify(value)
  if (typeof value === 'function') return `a function ${value.name || '(anonymous)'}`
  if (Array.isArray(value)) return 'an array'
  if (typeof value === 'object') {
    const keys = Object.keys(value)
    return keys.length === 0 ? 'an empty object' : `an object with keys ${keys.join(', ')}`
  }
  return String(value)
}

/** What kind of source this is, or `undefined` when it is none of them. */
export type SourceKind = 'runtime' | 'port' | 'broadcast' | 'url'

export function sourceKind(source: unknown): SourceKind | undefined {
  if (typeof source !== 'object' || source === null) return undefined
  if (INSPECTOR in source) return 'runtime'
  const candidate = source as { [field: string]: unknown }
  if (
    typeof candidate.postMessage === 'function' &&
    typeof candidate.addEventListener === 'function'
  ) {
    return 'port'
  }
  if (typeof candidate.broadcast === 'string' && candidate.broadcast !== '') return 'broadcast'
  if (typeof candidate.url === 'string' && /^wss?:\/\/./.test(candidate.url)) return 'url'
  return undefined
}

/** Checks every option and applies the defaults; throws a clear error naming the bad one. */
export function resolveOptions(options: unknown): ResolvedOptions {
  if (typeof options !== 'object' || options === null || Array.isArray(options)) {
    throw new TypeError(`${WHERE}: options must be an object, got ${describeValue(options)}.`)
  }
  for (const key of Object.keys(options)) {
    if (!KNOWN.includes(key)) {
      throw new TypeError(`${WHERE}: unknown option "${key}"; known options: ${KNOWN.join(', ')}.`)
    }
  }
  const o = options as { readonly [key: string]: unknown }
  if (o.source !== undefined && sourceKind(o.source) === undefined) {
    throw new TypeError(
      `${WHERE}: options.source must be a runtime from createRuntime(), a port (MessagePort, BroadcastChannel, Worker), { broadcast: 'channel-name' } or { url: 'ws://host:port' }, got ${describeValue(o.source)}.`,
    )
  }
  const container = o.container ?? (typeof document === 'undefined' ? undefined : document.body)
  if (
    typeof container !== 'object' ||
    container === null ||
    typeof (container as Node).appendChild !== 'function'
  ) {
    throw new TypeError(
      `${WHERE}: options.container must be a DOM element (default document.body, which this page lacks), got ${describeValue(o.container)}.`,
    )
  }
  if (o.open !== undefined && typeof o.open !== 'boolean') {
    throw new TypeError(`${WHERE}: options.open must be a boolean, got ${describeValue(o.open)}.`)
  }
  const hotkey = o.hotkey ?? DEFAULT_HOTKEY
  if (hotkey !== false) {
    if (typeof hotkey !== 'string' || parseHotkey(hotkey) === undefined) {
      throw new TypeError(
        `${WHERE}: options.hotkey must be a key combination such as 'Ctrl+Shift+F', or false, got ${describeValue(o.hotkey)}.`,
      )
    }
  }
  const position = o.position ?? 'bottom'
  if (typeof position !== 'string' || !POSITIONS.includes(position)) {
    throw new TypeError(
      `${WHERE}: options.position must be one of ${POSITIONS.join(', ')}, got ${describeValue(o.position)}.`,
    )
  }
  const record = o.record ?? 'always'
  if (typeof record !== 'string' || !RECORD_MODES.includes(record)) {
    throw new TypeError(
      `${WHERE}: options.record must be 'always' or 'while-open', got ${describeValue(o.record)}.`,
    )
  }
  return {
    source: o.source as DevtoolsSource | undefined,
    container: container as Element | DocumentFragment,
    open: o.open ?? false,
    hotkey,
    position: position as ResolvedOptions['position'],
    record: record as ResolvedOptions['record'],
    retention: resolveRetention(o.retention),
  }
}

function resolveRetention(retention: unknown): Retention {
  if (retention === undefined) return DEFAULT_RETENTION
  if (typeof retention !== 'object' || retention === null) {
    throw new TypeError(
      `${WHERE}: options.retention must be an object such as { tasks: 5000, events: 50000 }, got ${describeValue(retention)}.`,
    )
  }
  const r = retention as { readonly [key: string]: unknown }
  for (const key of Object.keys(r)) {
    if (key !== 'tasks' && key !== 'events') {
      throw new TypeError(
        `${WHERE}: unknown option "retention.${key}"; known: retention.tasks, retention.events.`,
      )
    }
  }
  const resolved = { ...DEFAULT_RETENTION }
  for (const key of ['tasks', 'events'] as const) {
    const value = r[key]
    if (value === undefined) continue
    if (typeof value !== 'number' || !Number.isSafeInteger(value) || value < 1) {
      throw new RangeError(
        `${WHERE}: options.retention.${key} must be a positive integer, got ${describeValue(value)}.`,
      )
    }
    resolved[key] = value
  }
  return resolved
}
