export function noop(): void {}
