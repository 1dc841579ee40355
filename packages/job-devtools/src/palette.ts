/**
 * How a task state is drawn: its colour, whether it is hatched, and the word
 * the legend uses. The panel's lanes and legend and the lab's figure read this
 * one table, so a state looks the same wherever a user meets it.
 *
 * @example
 * ```ts
 * import { type StateStyle, stateStyle } from '@vega/job-devtools'
 * const style: StateStyle = stateStyle('parked:coordinator')
 * console.log(style.color, style.hatched) // '#e0a526' true
 * ```
 */
export interface StateStyle {
  /** The legend's word for the state (every `parked:*` state is `parked`). */
  readonly name: string
  /** A CSS colour, readable on the panel's dark and the lab's light background. */
  readonly color: string
  /** Drawn with diagonal stripes: waiting on something, not working. */
  readonly hatched: boolean
  /** The same as a CSS `background` value (a stripe gradient when hatched). */
  readonly background: string
}

function style(name: string, color: string, hatched = false): StateStyle {
  const background = hatched
    ? `repeating-linear-gradient(135deg, ${color} 0 4px, rgba(0, 0, 0, 0.35) 4px 6px)`
    : color
  return { name, color, hatched, background }
}

/**
 * Every state in the order a legend lists it: live states first (running,
 * parked, queued), then the terminal ones. Queued is a solid violet and parked
 * a hatched orange, so the two kinds of waiting never look alike.
 *
 * @example
 * ```ts
 * import { STATE_STYLES } from '@vega/job-devtools'
 * for (const style of STATE_STYLES) console.log(style.name, style.color)
 * ```
 */
export const STATE_STYLES: readonly StateStyle[] = [
  style('running', '#2f6fde'),
  style('parked', '#e0a526', true),
  style('queued', '#9b7be0'),
  style('idle', '#5b6273'),
  style('success', '#2e9e62'),
  style('cancelled', '#8b93a6'),
  style('error', '#d64541'),
]

const UNKNOWN = style('unknown', '#b0b0b0')
const BY_NAME = new Map(STATE_STYLES.map((entry) => [entry.name, entry]))

/**
 * The style of a state as the wire names it: `'parked:coordinator'`,
 * `'parked:retry'` and every other `parked:*` share the parked style; a state
 * a newer kernel adds gets a neutral grey.
 *
 * @example
 * ```ts
 * import { stateStyle } from '@vega/job-devtools'
 * stateStyle('parked:retry').name // 'parked'
 * stateStyle('queued').hatched // false
 * ```
 */
export function stateStyle(state: string): StateStyle {
  const family = state.startsWith('parked') ? 'parked' : state
  return BY_NAME.get(family) ?? UNKNOWN
}
