import { type Context, createContext, useContext } from 'react'
import type { RuntimeStore } from './runtime-store.js'

export const RuntimeContext: Context<RuntimeStore | null> = createContext<RuntimeStore | null>(null)

/** The provider's store; outside a provider, an error that names `JobProvider` and the hook. */
export function useRuntimeStore(hook: string): RuntimeStore {
  const store = useContext(RuntimeContext)
  if (store === null) {
    throw new Error(
      `${hook}: no runtime here. Wrap the tree in <JobProvider runtime={runtime}> (from @vega/job-react).`,
    )
  }
  return store
}
