// Folds pending changesets into the first-release entry of each package's
// CHANGELOG.md, then deletes them.
//
// Why: a package that was never published has no "previous version" for a
// changeset to bump from. Its manifest already holds the version it will be
// published as (1.0.0), so `changeset version` with changesets pending would
// make the first release 1.1.0 and leave the changes of its making outside any
// changelog. Run this before the first release (RELEASING.md), and again after
// merging work that brought changesets for packages still unreleased.
//
// A package counts as released once the tag `<name>@<version>` exists (the
// release steps create it with `changeset tag`); its changesets are left for
// `changeset version`, as usual.
//
// Usage: node scripts/fold-changesets.mjs [--root <dir>] [--dry-run]
import { execFileSync } from 'node:child_process'
import { existsSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { join, resolve } from 'node:path'

const FEATURES = '### Features'
const REFINEMENTS = '### Refinements before the first release'
const INTRO =
  'The first published version. What it holds, folded from the changesets written while it was built:'

/** `{ packages: Map<name, bump>, body }` of a changeset file's text. */
export function parseChangeset(text, file) {
  const match = /^---\r?\n([\s\S]*?)\r?\n---\r?\n([\s\S]*)$/.exec(text)
  if (match === null) throw new Error(`${file}: no front matter (--- … ---)`)
  const packages = new Map()
  for (const line of match[1].split(/\r?\n/)) {
    if (line.trim() === '') continue
    const entry = /^\s*(['"]?)(@?[^'":\s]+)\1\s*:\s*(major|minor|patch)\s*$/.exec(line)
    if (entry === null) throw new Error(`${file}: cannot read the front matter line ${line}`)
    packages.set(entry[2], entry[3])
  }
  return { packages, body: match[2].trim() }
}

/** The text of a changeset with these packages and body. */
function formatChangeset(packages, body) {
  const lines = [...packages].map(([name, bump]) => `'${name}': ${bump}`)
  return `---\n${lines.join('\n')}\n---\n\n${body}\n`
}

/** A changeset body as one markdown list item. */
export function bullet(body) {
  return body
    .split('\n')
    .map((line, index) => (index === 0 ? `- ${line}` : line === '' ? '' : `  ${line}`))
    .join('\n')
}

/** An entry's text as `{ intro, sections: [[heading, text]…] }`. */
function parseEntry(text) {
  const parts = text.split(/^(?=### )/m)
  const intro = parts[0].startsWith('### ') ? '' : parts.shift().trim()
  const sections = parts.map((part) => {
    const newline = part.indexOf('\n')
    return newline === -1
      ? [part.trim(), '']
      : [part.slice(0, newline).trim(), part.slice(newline + 1).trim()]
  })
  return { intro, sections }
}

/**
 * The changelog text with `items` (`{ bump, body }`, in order) added to the
 * entry of `version`, which is created first under the title when missing.
 * Features (major, minor) and refinements (patch) get a section each.
 */
export function addToFirstEntry(changelog, name, version, items) {
  const text = changelog ?? `# ${name}\n`
  const [preamble, ...entries] = text.split(/^(?=## )/m)
  const heading = `## ${version}`
  let index = entries.findIndex((entry) => entry.split('\n', 1)[0].trim() === heading)
  if (index === -1) {
    entries.unshift(`${heading}\n\n${INTRO}\n`)
    index = 0
  }
  const entry = parseEntry(entries[index].slice(entries[index].indexOf('\n') + 1))
  for (const [section, bumps] of [
    [FEATURES, ['major', 'minor']],
    [REFINEMENTS, ['patch']],
  ]) {
    const added = items.filter((item) => bumps.includes(item.bump)).map((item) => bullet(item.body))
    if (added.length === 0) continue
    let found = entry.sections.find(([title]) => title === section)
    if (found === undefined) {
      found = [section, '']
      // features before refinements, whatever else the entry holds
      const refinements = entry.sections.findIndex(([title]) => title === REFINEMENTS)
      if (section === FEATURES && refinements !== -1) entry.sections.splice(refinements, 0, found)
      else entry.sections.push(found)
    }
    found[1] = [found[1], ...added].filter(Boolean).join('\n')
  }
  entries[index] = [
    heading,
    ...(entry.intro === '' ? [] : [entry.intro]),
    ...entry.sections.map(([title, body]) => `${title}\n\n${body}`),
  ].join('\n\n')
  const parts = [preamble.trim(), ...entries.map((entry) => entry.trim())]
  return `${parts.join('\n\n')}\n`
}

/** Whether `git tag` holds `<name>@<version>` in `root`. */
function isReleased(root, name, version) {
  try {
    const out = execFileSync('git', ['tag', '--list', `${name}@${version}`], {
      cwd: root,
      encoding: 'utf8',
      stdio: ['ignore', 'pipe', 'ignore'],
    })
    return out.trim() !== ''
  } catch {
    return false
  }
}

/** When the file was added to git (seconds), or Infinity for a file git does not know yet. */
function addedAt(root, file) {
  try {
    const out = execFileSync('git', ['log', '--diff-filter=A', '--format=%at', '--', file], {
      cwd: root,
      encoding: 'utf8',
      stdio: ['ignore', 'pipe', 'ignore'],
    })
    const times = out.trim().split('\n').filter(Boolean).map(Number)
    return times.length === 0 ? Number.POSITIVE_INFINITY : Math.min(...times)
  } catch {
    return Number.POSITIVE_INFINITY
  }
}

/** The publishable packages under packages/: `name → { dir, version }`. */
function publicPackages(root) {
  const packages = new Map()
  for (const dir of readdirSync(join(root, 'packages'))) {
    const file = join(root, 'packages', dir, 'package.json')
    if (!existsSync(file)) continue
    const manifest = JSON.parse(readFileSync(file, 'utf8'))
    if (manifest.private === true) continue
    packages.set(manifest.name, { dir: join(root, 'packages', dir), version: manifest.version })
  }
  return packages
}

/**
 * Folds every pending changeset of `root` into the first-release entries.
 * Returns `{ folded: [file…], kept: [file…], changelogs: Map<name, count> }`.
 */
export function foldChangesets(root, { dryRun = false } = {}) {
  const packages = publicPackages(root)
  const changesetDir = join(root, '.changeset')
  const files = readdirSync(changesetDir)
    .filter((file) => file.endsWith('.md') && file !== 'README.md')
    .map((file) => join(changesetDir, file))
    .map((file) => ({ file, at: addedAt(root, file) }))
    .sort((a, b) => a.at - b.at || a.file.localeCompare(b.file))
  const items = new Map() // package name → [{ bump, body }]
  const folded = []
  const kept = []
  for (const { file } of files) {
    const { packages: named, body } = parseChangeset(readFileSync(file, 'utf8'), file)
    const left = new Map()
    for (const [name, bump] of named) {
      const pkg = packages.get(name)
      if (pkg === undefined) throw new Error(`${file}: names ${name}, which is not a package here`)
      if (isReleased(root, name, pkg.version)) {
        left.set(name, bump)
        continue
      }
      if (!items.has(name)) items.set(name, [])
      items.get(name).push({ bump, body })
    }
    if (left.size === 0) {
      folded.push(file)
      if (!dryRun) rmSync(file)
    } else {
      kept.push(file)
      if (!dryRun && left.size < named.size) writeFileSync(file, formatChangeset(left, body))
    }
  }
  const changelogs = new Map()
  for (const [name, list] of items) {
    const { dir, version } = packages.get(name)
    const path = join(dir, 'CHANGELOG.md')
    const before = existsSync(path) ? readFileSync(path, 'utf8') : undefined
    if (!dryRun) writeFileSync(path, addToFirstEntry(before, name, version, list))
    changelogs.set(name, list.length)
  }
  return { folded, kept, changelogs }
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const args = process.argv.slice(2)
  const rootAt = args.indexOf('--root')
  const root = resolve(rootAt === -1 ? join(import.meta.dirname, '..') : args[rootAt + 1])
  const dryRun = args.includes('--dry-run')
  const { folded, kept, changelogs } = foldChangesets(root, { dryRun })
  for (const [name, count] of changelogs) {
    console.log(`${name}: ${count} changeset(s) folded into its first-release entry`)
  }
  console.log(
    `${folded.length} changeset(s) ${dryRun ? 'would be' : ''} deleted, ${kept.length} kept for released packages`,
  )
}
