// prelude=react (after prelude=core; for job-react's ```tsx fragments): the
// hooks, and the runtime, search and search box of the README's first sample.
import type { Task, TaskContext } from '@vega/job'
import { useRuntimeEvent, useTask, useTaskState } from '@vega/job-react'

const runtime = createRuntime({ plugins: [installCoordination] })
async function searchWords(ctx: TaskContext, query: string): Promise<string[]> {
  await ctx.sleep(50)
  return ['react', 'vega'].filter((word) => word.startsWith(query))
}
function SearchBox() {
  return null
}
