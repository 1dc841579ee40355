interface ElementOptions {
  readonly className?: string
  readonly text?: string
  readonly dataset?: Readonly<Record<string, string>>
  readonly attrs?: Readonly<Record<string, string>>
}

/** Creates an element with text set as text (never parsed as HTML). */
export function el<K extends keyof HTMLElementTagNameMap>(
  tag: K,
  options: ElementOptions = {},
  children: ReadonlyArray<Node | string> = [],
): HTMLElementTagNameMap[K] {
  const node = document.createElement(tag)
  if (options.className !== undefined) node.className = options.className
  if (options.text !== undefined) node.textContent = options.text
  for (const [key, value] of Object.entries(options.dataset ?? {})) node.dataset[key] = value
  for (const [key, value] of Object.entries(options.attrs ?? {})) node.setAttribute(key, value)
  node.append(...children)
  return node
}

/** Writes a text only when it changed: an unchanged text costs no layout. */
export function setText(node: HTMLElement, text: string): void {
  if (node.textContent !== text) node.textContent = text
}

/** Sets a `data-*` attribute only when it changed: an unchanged one costs no style work. */
export function setData(node: HTMLElement, key: string, value: string): void {
  if (node.dataset[key] !== value) node.dataset[key] = value
}

/** Sets an inline style property only when it changed. */
export function setStyle(node: HTMLElement, property: 'height' | 'top', value: string): void {
  if (node.style[property] !== value) node.style[property] = value
}
