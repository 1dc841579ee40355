import { copyFileSync, mkdirSync } from 'node:fs'
import { fileURLToPath } from 'node:url'
import type { Page } from 'playwright-core'

export { keepOffline, launchChromium } from '@vega/browser'

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
