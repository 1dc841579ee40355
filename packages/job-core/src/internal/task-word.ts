import type { TaskState } from '../task-state.js'
import { EXECUTE, type StageIndex } from './stages/stage.js'
import { FIRST_TERMINAL, QUEUED_INDEX, STATE_NAMES, stateIndexOf } from './state-index.js'

// The layout of `TaskWord.packed`: stage (bits 0–2), observed (bit 3),
// state index (bits 4–7), whether an attempt holds the record's slot
// (bit 8), attempt count (bits 9–30). A small integer has 31 bits, so the
// attempt count is capped at 2^22 − 1 (`MAX_ATTEMPTS`, checked where a retry
// policy is resolved).
const STAGE_BITS = 0b111
const OBSERVED_BIT = 0b1000
const STATE_SHIFT = 4
const STATE_BITS = 0b1111_0000
const JOB_BIT = 0b1_0000_0000
const LOW_BITS = 0b1_1111_1111
const ATTEMPT_SHIFT = 9
/** The bits of a first attempt waiting in the backend as the record itself: stage EXECUTE, state queued, no attempt. */
const WAITS_AS_TICKET = EXECUTE | (QUEUED_INDEX << STATE_SHIFT)

/**
 * The small state word of a task: its state, pipeline stage, attempt count,
 * whether anyone observed it and whether an attempt holds it, in one small
 * integer. Node keeps full 8-byte fields (no pointer compression): five
 * fields of their own would cost every record 32 B more, nearly a quarter of
 * what a task that waits holds in its record. The record (`TaskRecord`)
 * extends it; nothing else does, and only this file knows the layout.
 */
export abstract class TaskWord {
  /** The packed word (layout above); 0 is a new task: idle, no attempt, stage 0. */
  protected packed = 0

  /** The state; only `moveTo` (and a followed call's record, born ended) sets it. */
  get state(): TaskState {
    return STATE_NAMES[this.stateIndex]!
  }

  set state(state: TaskState) {
    this.stateIndex = stateIndexOf(state)
  }

  /** The state's index in `STATE_NAMES`. */
  protected get stateIndex(): number {
    return (this.packed & STATE_BITS) >>> STATE_SHIFT
  }

  protected set stateIndex(index: number) {
    this.packed = (this.packed & ~STATE_BITS) | (index << STATE_SHIFT)
  }

  /** The stage the pipeline runs next. */
  get stage(): StageIndex {
    return (this.packed & STAGE_BITS) as StageIndex
  }

  set stage(stage: StageIndex) {
    this.packed = (this.packed & ~STAGE_BITS) | stage
  }

  /** Someone awaited the task, read its promise or called settle (onUnobservedError stays quiet). */
  get observed(): boolean {
    return (this.packed & OBSERVED_BIT) !== 0
  }

  set observed(observed: boolean) {
    this.packed = observed ? this.packed | OBSERVED_BIT : this.packed & ~OBSERVED_BIT
  }

  /** Attempts started so far (the one running included). */
  get attempt(): number {
    return this.packed >>> ATTEMPT_SHIFT
  }

  set attempt(attempt: number) {
    this.packed = (this.packed & LOW_BITS) | (attempt << ATTEMPT_SHIFT)
  }

  /** An attempt holds the record's slot (see `TaskRecord.job`): a bit test, not a class test. */
  protected get holdsAttempt(): boolean {
    return (this.packed & JOB_BIT) !== 0
  }

  protected set holdsAttempt(holds: boolean) {
    this.packed = holds ? this.packed | JOB_BIT : this.packed & ~JOB_BIT
  }

  /**
   * Waiting as its own ticket: queued for the first attempt and handed to
   * the backend (the queue stage moves on to EXECUTE just before), not
   * started yet. One mask compare.
   */
  get waitsAsTicket(): boolean {
    return (this.packed & (STAGE_BITS | STATE_BITS | JOB_BIT)) === WAITS_AS_TICKET
  }

  /** The task is in a terminal state (its state index is `success` or after). */
  protected get ended(): boolean {
    return (this.packed & STATE_BITS) >= FIRST_TERMINAL << STATE_SHIFT
  }
}
