// prelude=runtime (after prelude=core): the `runtime` a sample runs on, with
// coordination installed.
const runtime = createRuntime({ plugins: [installCoordination] })
