/**
 * The tag name of the panel's host element.
 *
 * @example
 * ```ts fragment
 * const host = document.querySelector(DEVTOOLS_TAG_NAME) // <vega-job-devtools>
 * host?.shadowRoot?.querySelectorAll('[data-task-id]')
 * ```
 */
export const DEVTOOLS_TAG_NAME = 'vega-job-devtools'

/**
 * Defines the `<vega-job-devtools>` custom element (once per page) and
 * returns its class. The element is only a host: {@link mountDevtools}
 * creates it with an **open** shadow root, so tests can reach the panel's
 * `data-*` hooks through `element.shadowRoot`.
 *
 * @example
 * ```ts fragment
 * defineDevtoolsElement()
 * const host = document.querySelector('vega-job-devtools')
 * host?.shadowRoot?.querySelectorAll('[data-task-id]')
 * ```
 */
export function defineDevtoolsElement(): CustomElementConstructor {
  const existing = customElements.get(DEVTOOLS_TAG_NAME)
  if (existing !== undefined) return existing
  class VegaJobDevtoolsElement extends HTMLElement {
    constructor() {
      super()
      this.attachShadow({ mode: 'open' })
    }
  }
  customElements.define(DEVTOOLS_TAG_NAME, VegaJobDevtoolsElement)
  return VegaJobDevtoolsElement
}
