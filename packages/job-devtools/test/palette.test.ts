import { describe, expect, it } from 'vitest'
import { STATE_STYLES, stateStyle } from '../src/palette.js'

describe('the state palette', () => {
  it('draws every parked:* state as parked, hatched, and never like queued', () => {
    for (const state of [
      'parked:coordinator',
      'parked:shaper',
      'parked:dependencies',
      'parked:retry',
    ]) {
      expect(stateStyle(state)).toBe(stateStyle('parked'))
    }
    expect(stateStyle('parked:coordinator')).toMatchObject({ name: 'parked', hatched: true })
    expect(stateStyle('parked:coordinator').background).toMatch(/^repeating-linear-gradient\(/)
    expect(stateStyle('queued')).toMatchObject({ name: 'queued', hatched: false })
    expect(stateStyle('queued').color).not.toBe(stateStyle('parked').color)
  })

  it('gives each state its own colour, and a state it does not know a neutral one', () => {
    const colors = STATE_STYLES.map((style) => style.color)
    expect(new Set(colors).size).toBe(colors.length)
    expect(stateStyle('teleporting')).toMatchObject({ name: 'unknown', hatched: false })
    expect(colors).not.toContain(stateStyle('teleporting').color)
  })
})
