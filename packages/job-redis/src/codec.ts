// The codec is engine-neutral: one for every engine, from @vega/job-distributed.
export { type Codec, jsonCodec } from '@vega/job-distributed'
