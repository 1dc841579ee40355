import { mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { pathToFileURL } from 'node:url'
import { type Runtime, subscribe, whenIdle } from '@vega/job-core'
import { JobProvider } from '@vega/job-react'
import { act, type ComponentType, type ReactNode, StrictMode, version } from 'react'
import { createRoot, type Root } from 'react-dom/client'
import { afterAll, describe, expect, it } from 'vitest'
import { MODES, nonZeroSizes } from './support.js'

// The examples run on the real clock, so no assertion here depends on how
// long a step takes: each waits for the runtime to be idle, or checks what
// happened synchronously inside run().

// Every ```tsx block of the README is a module: the tests import it, mount
// what it exports and use it as a person would. A block that cannot run on
// its own is marked ```tsx fragment.
// vitest runs from the package directory (its root).
const readme = readFileSync(join(process.cwd(), 'README.md'), 'utf8')
const fences = [...readme.matchAll(/^```(.*)$/gm)].map((match) => match[1]!)
const examples = [...readme.matchAll(/^```tsx\n([\s\S]*?)^```$/gm)].map((match) => match[1]!)
const dir = join(process.cwd(), 'test', `.readme-examples-${version}`)

afterAll(() => {
  rmSync(dir, { recursive: true, force: true })
})

async function load<T>(index: number): Promise<T> {
  mkdirSync(dir, { recursive: true })
  const file = join(dir, `example-${index}.tsx`)
  writeFileSync(file, examples[index]!)
  return import(/* @vite-ignore */ pathToFileURL(file).href) as Promise<T>
}

async function mount(runtime: Runtime, ui: ReactNode, strict: boolean) {
  const container = document.createElement('div')
  document.body.append(container)
  const root: Root = createRoot(container)
  const tree = <JobProvider runtime={runtime}>{ui}</JobProvider>
  await act(async () => root.render(strict ? <StrictMode>{tree}</StrictMode> : tree))
  return {
    container,
    async unmount() {
      await act(async () => root.unmount())
      container.remove()
    },
  }
}

/** Types into a React-controlled input as a keyboard does (the native setter, then an input event). */
function type(input: HTMLInputElement, value: string) {
  const setter = Object.getOwnPropertyDescriptor(HTMLInputElement.prototype, 'value')!.set!
  setter.call(input, value)
  input.dispatchEvent(new Event('input', { bubbles: true }))
}

const settled = (runtime: Runtime) => act(() => whenIdle(runtime))

describe('README', () => {
  it('marks every code block that does not run as a fragment', () => {
    expect(examples).toHaveLength(2)
    for (const fence of fences) {
      if (fence === '') continue // a closing fence
      // a fragment may name preludes: scripts/docs.test.mjs type-checks it
      expect(['tsx', 'sh', 'tsx fragment', 'ts fragment']).toContain(
        fence.replace(/ prelude=\S+$/, ''),
      )
    }
  })
})

describe.each(MODES)(`README examples on React ${version} ($mode)`, ({ strict }) => {
  it('the search box: only the newest search finishes', async () => {
    const { runtime, SearchBox } = await load<{ runtime: Runtime; SearchBox: ComponentType }>(0)
    const view = await mount(runtime, <SearchBox />, strict)
    const input = view.container.querySelector('input')!
    const cancelled: string[] = []
    const off = subscribe(runtime, (event) => {
      if (event.type === 'task:transition' && event.to === 'cancelled') {
        cancelled.push(String(event.reason))
      }
    })
    await act(async () => {
      for (const value of ['v', 'vi', 'vit']) type(input, value)
    })
    off()
    expect(cancelled).toEqual(['abort', 'abort']) // the first two searches, restarted
    await settled(runtime)
    const words = [...view.container.querySelectorAll('li')].map((li) => li.textContent)
    expect(words).toEqual(['vite', 'vitest'])
    expect(view.container.querySelector('progress')).toBeNull()
    await view.unmount()
    expect(nonZeroSizes(runtime)).toEqual({})
  })

  it('the save button, the deduped rows and the footer', async () => {
    const { runtime, requests, Row, SaveButton, Footer } = await load<{
      runtime: Runtime
      requests: string[]
      Row: ComponentType<{ id: number }>
      SaveButton: ComponentType<{ text: string }>
      Footer: ComponentType
    }>(1)
    requests.length = 0
    const view = await mount(
      runtime,
      <>
        <ul>
          <Row id={7} />
          <Row id={7} />
        </ul>
        <SaveButton text="hello" />
        <Footer />
      </>,
      strict,
    )
    const text = () => view.container.textContent
    expect(requests).toEqual(['GET /docs/7']) // four calls in StrictMode, two otherwise: one request
    await settled(runtime)
    expect(text()).toBe('Document 7Document 7save0 running, 0 waiting')
    expect(requests).toEqual(['GET /docs/7'])

    const button = view.container.querySelector('button')!
    await act(async () => {
      for (let click = 0; click < 3; click++) button.click()
    })
    expect(requests).toEqual(['GET /docs/7', 'PUT /draft hello']) // two clicks dropped
    await settled(runtime)
    expect(button.textContent).toBe('saved 5 chars')
    expect(button.disabled).toBe(false)
    expect(text()).toBe('Document 7Document 7saved 5 chars0 running, 0 waiting')
    await view.unmount()
    expect(nonZeroSizes(runtime)).toEqual({})
  })
})
