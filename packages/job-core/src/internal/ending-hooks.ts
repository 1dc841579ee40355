import type { Claim, TaskCallback, TaskRecord } from './model.js'

/**
 * `ClaimOptions.onSettled` of the claim that decided `task` (if it has
 * one): once, at the task's ending. A hook that throws is reported and the
 * ending goes on.
 */
export function tellClaimSettled(task: TaskRecord): void {
  const claim = task.decidedBy
  if (claim?.onSettled === undefined) return
  callHook(claim, 'onSettled', claim.onSettled, task)
}

/**
 * `ClaimOptions.onExited` of the claim that decided `task` (if it has
 * one), once: the task has ended and no body of it holds a slot. The
 * claim is let go after it.
 */
export function tellClaimExited(task: TaskRecord): void {
  const claim = task.decidedBy
  if (claim === undefined) return
  task.decidedBy = undefined
  if (claim.onExited !== undefined) callHook(claim, 'onExited', claim.onExited, task)
}

function callHook(
  claim: Claim,
  name: 'onSettled' | 'onExited',
  hook: (task: TaskRecord['handle'], binding: unknown) => void,
  task: TaskRecord,
): void {
  try {
    hook(task.handle, bindingOf(claim, task))
  } catch (error) {
    reportHookError(`${claim.plugin}'s claim ${name}`, task, error)
  }
}

/** The binding `claim`'s tag carries on `task` (the one its handler got). */
function bindingOf(claim: Claim, task: TaskRecord): unknown {
  for (let layer = task.bindings; layer !== undefined; layer = layer.inner) {
    if (layer.tag === claim.tag) return layer.binding
  }
  return undefined
}

/**
 * A plugin's hook or callback threw while the kernel ended a task: the
 * kernel cannot hand the error to anyone who waits for it, so it goes to
 * the console, and the ending goes on (the task's promise, its slot, the
 * other hooks are not affected).
 */
export function reportHookError(what: string, task: TaskRecord, error: unknown): void {
  console.error(
    `[@vega/job-core] ${what} threw for task #${task.id}; the task's ending went on.`,
    error,
  )
}

/** Runs a task's callbacks once, in order, with its handle; one that throws is reported. */
export function runTaskCallbacks(
  callbacks: TaskCallback[] | undefined,
  task: TaskRecord,
  what: string,
): void {
  if (callbacks === undefined) return
  for (const callback of callbacks) {
    try {
      callback(task.handle)
    } catch (error) {
      reportHookError(what, task, error)
    }
  }
}
