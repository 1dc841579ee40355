/**
 * The first error is primary; later ones travel with it. One error is
 * returned as is, so `catch (e) { e === theFailure }` keeps working in the
 * common case.
 */
export function combineErrors(errors: readonly unknown[], message: string): unknown {
  if (errors.length === 1) return errors[0]
  return new AggregateError(
    errors,
    `${message} (${errors.length} errors; the first is the cause)`,
    {
      cause: errors[0],
    },
  )
}

export function abortReason(message: string): DOMException {
  return new DOMException(message, 'AbortError')
}
