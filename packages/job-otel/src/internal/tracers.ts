import type { Runtime } from '@vega/job-core'
import type { TaskTracer } from './task-tracer.js'

// The tracers installed on each runtime, for what reaches a task from
// outside its runtime's events: a coordinator that carries a task span's
// context to another process (`dedupeTraceContext`) is told the runtime and
// the task, and finds the spans here.
const byRuntime = new WeakMap<Runtime, Set<TaskTracer>>()

/** Registers `tracer` for `runtime`; returns its remover. */
export function registerTracer(runtime: Runtime, tracer: TaskTracer): () => void {
  let tracers = byRuntime.get(runtime)
  if (tracers === undefined) {
    tracers = new Set()
    byRuntime.set(runtime, tracers)
  }
  tracers.add(tracer)
  return () => {
    const left = byRuntime.get(runtime)
    left?.delete(tracer)
    if (left?.size === 0) byRuntime.delete(runtime)
  }
}

/** The tracers installed on `runtime` (two installs trace it independently). */
export function tracersOf(runtime: Runtime): ReadonlySet<TaskTracer> {
  return byRuntime.get(runtime) ?? NONE
}

const NONE: ReadonlySet<TaskTracer> = new Set()
