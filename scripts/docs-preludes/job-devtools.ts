// prelude=job-devtools: the values a devtools sample may use, from the panel
// and from the protocol, as a sample that begins with its own imports would
// have them.
import { installPerformanceTracks, mountDevtools } from '@vega/job-devtools'
import {
  connectDevtools,
  createBroadcastChannelTransport,
  createNdjsonTransport,
} from '@vega/job-devtools-protocol'
