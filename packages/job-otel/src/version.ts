declare const __PACKAGE_VERSION__: string

/**
 * The version of this copy of `@vega/job-otel` (injected at build time from
 * package.json); the default tracer and meter carry it as their
 * instrumentation scope's version.
 *
 * @example
 * ```ts
 * console.log(`tracing with @vega/job-otel ${VERSION}`)
 * ```
 */
export const VERSION: string = __PACKAGE_VERSION__
