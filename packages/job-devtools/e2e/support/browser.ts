import { copyFileSync, existsSync, mkdirSync } from 'node:fs'
import { fileURLToPath } from 'node:url'
import { type Browser, chromium, type Page } from 'playwright-core'

const CHROMIUM = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium'
const CHROMIUM_ARGS = [
  '--headless',
  '--no-sandbox',
  '--disable-gpu',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
  '--no-first-run',
  '--disable-quic',
]

/** Debian's Chromium, headless; never a downloaded browser. */
export async function launchChromium(extraArgs: readonly string[] = []): Promise<Browser> {
  if (!existsSync(CHROMIUM)) {
    throw new Error(`${CHROMIUM} is missing: apt-get install chromium (or set CHROMIUM_PATH).`)
  }
  return chromium.launch({ executablePath: CHROMIUM, args: [...CHROMIUM_ARGS, ...extraArgs] })
}

const PACKAGE_DOCS = fileURLToPath(new URL('../../docs/', import.meta.url))
const REPO_DOCS = fileURLToPath(new URL('../../../../docs/', import.meta.url))

/**
 * With `SCREENSHOTS=1`, saves the page as `docs/<name>.png` in the package
 * (the README shows them) and as `docs/devtools-<name>.png` at the root.
 * Without it, writes nothing: a test run never dirties the tree.
 */
export async function saveScreenshot(page: Page, name: string): Promise<void> {
  if (process.env.SCREENSHOTS !== '1') return
  mkdirSync(PACKAGE_DOCS, { recursive: true })
  const file = `${PACKAGE_DOCS}${name}.png`
  await page.screenshot({ path: file })
  copyFileSync(file, `${REPO_DOCS}devtools-${name}.png`)
}
