import { inspect, run } from '@vega/job-core'
import { createJobPlugin, useCounts, useTask } from '@vega/job-vue'
import { describe, expect, it } from 'vitest'
import { createSSRApp, defineComponent, h, KeepAlive, onMounted } from 'vue'
import { renderToString } from 'vue/server-renderer'
import { flush, MODES, testRuntime } from './support.js'

let bodies = 0

/** A search box that loads once mounted, with a footer of counts. */
const Search = defineComponent({
  setup() {
    const search = useTask(async (ctx, q: string) => {
      bodies++
      await ctx.sleep(10)
      return [`${q}-1`, `${q}-2`]
    })
    const counts = useCounts()
    onMounted(() => {
      search.run('vega')
    })
    return () =>
      h('section', [
        h('p', { id: 'state' }, search.state.value),
        h('p', { id: 'counts' }, `${counts.value.live} live`),
        h(
          'ul',
          (search.value.value ?? []).map((hit) => h('li', hit)),
        ),
      ])
  },
})

describe.each(MODES)('server rendering and hydration ($mode)', (mode) => {
  const App = defineComponent({
    setup: () => () => (mode.keepAlive ? h(KeepAlive, null, [h(Search)]) : h(Search)),
  })

  it('renderToString runs nothing and reads idle; hydrating the same HTML reports no mismatch', async () => {
    bodies = 0
    const server = testRuntime()
    const serverWarnings: string[] = []
    const serverApp = createSSRApp(App).use(createJobPlugin(server.runtime))
    serverApp.config.warnHandler = (message) => void serverWarnings.push(message)
    const html = await renderToString(serverApp)
    expect(html).toContain('<p id="state">idle</p>')
    expect(html).toContain('<p id="counts">0 live</p>')
    expect(bodies).toBe(0)
    expect(inspect(server.runtime).lastSeq).toBe(0)

    // The browser's runtime already holds a task: the first render must still read what the server read.
    const client = testRuntime()
    const busy = run(client.runtime, (ctx) => ctx.sleep(10))
    const container = document.createElement('div')
    container.innerHTML = html
    document.body.append(container)
    const clientWarnings: string[] = []
    const clientApp = createSSRApp(App).use(createJobPlugin(client.runtime))
    clientApp.config.warnHandler = (message) => void clientWarnings.push(message)
    clientApp.mount(container)
    await flush()
    expect(clientWarnings).toEqual([])
    expect(serverWarnings).toEqual([])
    expect(container.querySelector('#state')?.textContent).toBe('running')
    expect(container.querySelector('#counts')?.textContent).toBe('2 live')
    await client.clock.advance(10)
    await busy
    await flush()
    expect(container.querySelector('ul')?.textContent).toBe('vega-1vega-2')
    expect(bodies).toBe(1)
    clientApp.unmount()
    container.remove()
  })
})
