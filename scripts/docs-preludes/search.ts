// prelude=search (after prelude=stand-ins): the request a search box sends,
// as a task function.
const search = (_ctx: unknown, text: string) => later([`${text}…`])
