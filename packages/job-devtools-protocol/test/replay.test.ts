import { describe, expect, it } from 'vitest'
import {
  createNdjsonParser,
  type Envelope,
  initialState,
  lanes,
  parseNdjson,
  reduce,
  reduceAll,
  session,
} from '../src/index.js'
import { SCENARIOS } from './support/scenarios.js'

describe.each(Object.keys(SCENARIOS))('replaying the %s recording', (name) => {
  it('gives the same lanes as the live connection did', async () => {
    const recording = await (
      SCENARIOS[name] as () => ReturnType<NonNullable<(typeof SCENARIOS)[string]>>
    )()
    const liveLanes = lanes(recording.live, recording.sid)
    expect(liveLanes.length).toBeGreaterThan(0)

    const replayed = reduceAll(parseNdjson(recording.ndjson))
    expect(lanes(replayed, recording.sid)).toEqual(liveLanes)
    expect(session(replayed, recording.sid)).toEqual(session(recording.live, recording.sid))

    // Streamed in awkward chunks, as from a socket or a file stream.
    let streamed = initialState()
    const parser = createNdjsonParser((envelope: Envelope) => {
      streamed = reduce(streamed, envelope)
    })
    for (let at = 0; at < recording.ndjson.length; at += 13) {
      parser.push(recording.ndjson.slice(at, at + 13))
    }
    parser.end()
    expect(lanes(streamed, recording.sid)).toEqual(liveLanes)
  })
})
