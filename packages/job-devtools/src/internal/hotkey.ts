/**
 * The panel's default toggle. Not Ctrl+Shift+J: Chrome, Edge and Firefox on
 * Windows and Linux open their own console with it, and the page never sees
 * the key. Chrome's accelerator table also takes Ctrl+Shift with A, B, C, D,
 * E, G, I, M, N, O, P, R, T and W; Firefox takes E, H, K, S, X and Y.
 */
export const DEFAULT_HOTKEY = 'Ctrl+Shift+F'

/** A parsed key combination. */
export interface Hotkey {
  readonly ctrl: boolean
  readonly shift: boolean
  readonly alt: boolean
  readonly meta: boolean
  /** `KeyboardEvent.key`, lower-cased. */
  readonly key: string
}

const MODIFIERS = new Set(['ctrl', 'control', 'shift', 'alt', 'option', 'meta', 'cmd', 'command'])

/** Parses `Ctrl+Shift+J` (case-insensitive); `undefined` when it is not one key plus modifiers. */
export function parseHotkey(text: string): Hotkey | undefined {
  const parts = text
    .split('+')
    .map((part) => part.trim().toLowerCase())
    .filter((part) => part !== '')
  const keys = parts.filter((part) => !MODIFIERS.has(part))
  const key = keys[0]
  if (keys.length !== 1 || key === undefined) return undefined
  return {
    ctrl: parts.includes('ctrl') || parts.includes('control'),
    shift: parts.includes('shift'),
    alt: parts.includes('alt') || parts.includes('option'),
    meta: parts.includes('meta') || parts.includes('cmd') || parts.includes('command'),
    key,
  }
}

/** Whether a keyboard event is this combination. */
export function matchesHotkey(hotkey: Hotkey, event: KeyboardEvent): boolean {
  return (
    event.key.toLowerCase() === hotkey.key &&
    event.ctrlKey === hotkey.ctrl &&
    event.shiftKey === hotkey.shift &&
    event.altKey === hotkey.alt &&
    event.metaKey === hotkey.meta
  )
}
