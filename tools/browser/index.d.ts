import type { Browser, BrowserContext, Page } from 'playwright-core'

/** Where Chromium is: `CHROMIUM_PATH`, or Debian's `/usr/bin/chromium`. */
export function chromiumPath(): string

/**
 * Debian's Chromium, headless, without its own background traffic; throws
 * with the install command when it is missing. Never a downloaded browser.
 */
export function launchChromium(extraArgs?: readonly string[]): Promise<Browser>

/**
 * Refuses every request of `target` that is not for 127.0.0.1; resolves with
 * the list the refused URLs go into (a test expects it to stay empty).
 */
export function keepOffline(target: Page | BrowserContext): Promise<string[]>

/** A file server on loopback at a free port. */
export interface FileServer {
  /** `http://127.0.0.1:<port>/` */
  readonly url: string
  /** Closes every connection and the server. */
  close(): Promise<void>
}

/** Maps a URL path to a file; `undefined` refuses it (403). */
export type Locate = (pathname: string) => string | undefined

export interface ServeFilesOptions {
  /** Rewrites a file's body before it is sent (e.g. an HTML page's import map). */
  readonly transform?: (file: string, body: Buffer) => Buffer | string
}

/** `root`'s files, `/` and `dir/` as their `index.html`; nothing outside `root`. */
export function insideRoot(root: string): Locate

/** Serves what `locate` finds, with its content type and no caching. */
export function serveFiles(locate: Locate, options?: ServeFilesOptions): Promise<FileServer>

/** `serveFiles(insideRoot(root))`: enough for a built page. */
export function serveStatic(root: string): Promise<FileServer>

/** `detail.devtools` of a custom track entry (the DevTools extensibility API). */
export interface TrackEntryDevtools {
  readonly dataType: string
  readonly track: string
  readonly trackGroup: string
  readonly color: string
  /** `''` for a `console.timeStamp` entry, which carries none. */
  readonly tooltipText: string
  /** `[]` for a `console.timeStamp` entry, which carries none. */
  readonly properties: readonly (readonly [string, string])[]
}

/** One custom track entry read back from a trace; times in the trace's µs. */
export interface TrackEntry {
  /** `console.timeStamp` with a track, or `performance.measure` with `detail.devtools`. */
  readonly api: 'timeStamp' | 'measure'
  readonly name: string
  readonly start: number
  readonly end: number
  readonly devtools: TrackEntryDevtools
}

/**
 * The custom track entries of a parsed Chromium trace (`{ traceEvents }` or
 * the bare array), sorted by start, the longer first on a tie. User timing
 * without `detail.devtools` and time stamps without a track are left out.
 */
export function trackEntriesOf(trace: unknown): TrackEntry[]

/**
 * Records a trace of `page` through the DevTools protocol (`Tracing.start`,
 * `action()`, `Tracing.end`) and returns its custom track entries: what the
 * Performance panel would draw in its custom tracks.
 */
export function recordTrackEntries(
  page: Page,
  action: () => Promise<unknown>,
): Promise<TrackEntry[]>
