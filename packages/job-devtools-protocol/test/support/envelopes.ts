import type { Envelope, WireEvent } from '../../src/index.js'

/** Hand-written envelope sequences for reducer tests: seq and ts grow by one per envelope. */
export function producer(sid = 's1', runtime = 'test') {
  let seq = 0
  return {
    next(e: WireEvent | { readonly type: string; readonly [field: string]: unknown }): Envelope {
      seq += 1
      return at(seq, e)
    },
    skip(count: number): void {
      seq += count
    },
    at,
  }
  function at(
    atSeq: number,
    e: WireEvent | { readonly type: string; readonly [field: string]: unknown },
  ): Envelope {
    return {
      proto: 'vega-job',
      v: 1,
      sid,
      seq: atSeq,
      ts: atSeq * 10,
      src: { runtime, lib: 'test@0' },
      e: e as WireEvent,
    }
  }
}
