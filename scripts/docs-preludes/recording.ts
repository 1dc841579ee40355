// prelude=recording: a `run.ndjson` in the current folder, recorded from a
// real runtime (one task) the way the README's recording section says, for
// the samples that read one. Aliased names, so a sample's own imports stay free.
import { writeFileSync as writeRecording } from 'node:fs'
import { createRuntime as createRecordedRuntime, run as runRecorded } from '@vega/job-core'
import {
  connectDevtools as connectRecorder,
  createNdjsonTransport as createRecorder,
} from '@vega/job-devtools-protocol'

{
  const chunks: string[] = []
  const recorded = createRecordedRuntime({ name: 'recorded' })
  const disconnect = connectRecorder(
    recorded,
    createRecorder((chunk) => chunks.push(chunk)),
    { sessionId: 'recorded' },
  )
  await runRecorded(recorded, async () => 42, { label: 'answer' })
  disconnect()
  writeRecording('run.ndjson', chunks.join(''))
}
