import { mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { pathToFileURL } from 'node:url'
import { afterAll, describe, expect, it } from 'vitest'

// Every ```js block of the README is a complete program that checks its own
// claims with node:assert; running them keeps the guide honest.
const readme = readFileSync(new URL('../README.md', import.meta.url), 'utf8')
const examples = [...readme.matchAll(/```js\n([\s\S]*?)```/g)].map((match) => match[1]!)
const dir = new URL('./.readme-examples/', import.meta.url)

afterAll(() => {
  rmSync(dir, { recursive: true, force: true })
})

describe('README examples', () => {
  it('has one per strategy (two for keepLatest) plus the quick start and two custom coordinators', () => {
    expect(examples.length).toBe(9)
  })

  it.each(examples.map((code, index) => [index + 1, code] as const))(
    'example %i runs and its assertions hold',
    async (index, code) => {
      mkdirSync(dir, { recursive: true })
      const file = new URL(`example-${index}.mjs`, dir)
      // An example proves its claims with node:assert, and its last line
      // exports a marker: the import resolves with it only when every
      // top-level statement (and every assertion) before it has run.
      expect(code, 'the example checks its own claims').toMatch(/\bassert(?:\.\w+)?\(/)
      writeFileSync(file, `${code}\nexport const ranToTheEnd = true\n`)
      const module = (await import(/* @vite-ignore */ pathToFileURL(file.pathname).href)) as {
        ranToTheEnd?: unknown
      }
      expect(module.ranToTheEnd).toBe(true)
    },
    10_000,
  )
})
