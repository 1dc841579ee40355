declare const __PACKAGE_VERSION__: string

/**
 * The version of this copy of `@vega/job-core` (injected at build time from
 * package.json).
 *
 * @example
 * ```ts
 * console.log(`running on @vega/job-core ${VERSION}`)
 * ```
 */
export const VERSION: string = __PACKAGE_VERSION__
