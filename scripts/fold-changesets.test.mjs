// fold-changesets on a scratch repository: two unreleased packages, one
// released one, changesets of every kind, folded twice.
import assert from 'node:assert/strict'
import { execFileSync } from 'node:child_process'
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { after, test } from 'node:test'
import { addToFirstEntry, bullet, foldChangesets, parseChangeset } from './fold-changesets.mjs'

const dir = mkdtempSync(join(tmpdir(), 'fold-changesets-'))
after(() => rmSync(dir, { recursive: true, force: true }))

const git = (...args) =>
  execFileSync('git', ['-c', 'commit.gpgsign=false', '-c', 'tag.gpgsign=false', ...args], {
    cwd: dir,
    encoding: 'utf8',
    env: {
      ...process.env,
      GIT_AUTHOR_NAME: 'test',
      GIT_AUTHOR_EMAIL: 'test@example.com',
      GIT_COMMITTER_NAME: 'test',
      GIT_COMMITTER_EMAIL: 'test@example.com',
    },
  })

function write(path, text) {
  mkdirSync(join(dir, path, '..'), { recursive: true })
  writeFileSync(join(dir, path), text)
}

function pkg(folder, name, version) {
  write(`packages/${folder}/package.json`, JSON.stringify({ name, version }))
}

function changeset(file, packages, body) {
  const front = Object.entries(packages)
    .map(([name, bump]) => `'${name}': ${bump}`)
    .join('\n')
  write(`.changeset/${file}`, `---\n${front}\n---\n\n${body}\n`)
}

test('parseChangeset reads quoted and double-quoted names and the body', () => {
  const { packages, body } = parseChangeset(
    `---\n'@x/a': minor\n"@x/b": patch\n---\n\nLine one.\nLine two.\n`,
    'x.md',
  )
  assert.deepEqual(
    [...packages],
    [
      ['@x/a', 'minor'],
      ['@x/b', 'patch'],
    ],
  )
  assert.equal(body, 'Line one.\nLine two.')
  assert.throws(() => parseChangeset('no front matter', 'y.md'), /y\.md: no front matter/)
})

test('bullet indents the lines after the first, leaving blank lines blank', () => {
  assert.equal(bullet('One\ntwo\n\nthree'), '- One\n  two\n\n  three')
})

test('addToFirstEntry creates the entry, then appends to its sections', () => {
  const first = addToFirstEntry(undefined, '@x/a', '1.0.0', [
    { bump: 'patch', body: 'Faster.' },
    { bump: 'minor', body: 'A feature.' },
  ])
  assert.match(first, /^# @x\/a\n\n## 1\.0\.0\n\nThe first published version\./)
  assert.ok(first.indexOf('### Features') < first.indexOf('### Refinements'))
  assert.match(first, /### Features\n\n- A feature\.\n/)
  const second = addToFirstEntry(first, '@x/a', '1.0.0', [{ bump: 'minor', body: 'Another.' }])
  assert.match(second, /### Features\n\n- A feature\.\n- Another\.\n\n### Refinements/)
  assert.equal(second.match(/## 1\.0\.0/g).length, 1)
})

test('folds unreleased packages, keeps what a released package still needs, deletes the rest', () => {
  git('init', '-q')
  pkg('a', '@x/a', '1.0.0')
  pkg('b', '@x/b', '1.0.0')
  pkg('c', '@x/c', '2.3.0')
  write('packages/p/package.json', JSON.stringify({ name: '@x/private', private: true }))
  write('.changeset/README.md', '# Changesets\n')
  changeset('one.md', { '@x/a': 'minor' }, 'First feature of a.')
  git('add', '.')
  git('commit', '-qm', 'one')
  changeset('two.md', { '@x/a': 'patch', '@x/b': 'minor' }, 'Shared change.\nSecond line.')
  changeset('three.md', { '@x/b': 'patch', '@x/c': 'patch' }, 'Fix in b and c.')
  git('add', '.')
  git('commit', '-qm', 'two and three')
  git('tag', '@x/c@2.3.0') // c is released

  const { folded, kept, changelogs } = foldChangesets(dir)
  assert.deepEqual(
    folded.map((file) => file.slice(file.lastIndexOf('/') + 1)),
    ['one.md', 'two.md'],
  )
  assert.deepEqual(
    kept.map((file) => file.slice(file.lastIndexOf('/') + 1)),
    ['three.md'],
  )
  assert.deepEqual(
    [...changelogs],
    [
      ['@x/a', 2],
      ['@x/b', 2],
    ],
  )
  assert.ok(!existsSync(join(dir, '.changeset/one.md')))
  assert.ok(existsSync(join(dir, '.changeset/README.md')))
  // three.md keeps only the released package
  assert.deepEqual(
    [
      ...parseChangeset(readFileSync(join(dir, '.changeset/three.md'), 'utf8'), 'three.md')
        .packages,
    ],
    [['@x/c', 'patch']],
  )
  const a = readFileSync(join(dir, 'packages/a/CHANGELOG.md'), 'utf8')
  assert.match(
    a,
    /### Features\n\n- First feature of a\.\n\n### Refinements before the first release\n\n- Shared change\.\n {2}Second line\.\n$/,
  )
  const b = readFileSync(join(dir, 'packages/b/CHANGELOG.md'), 'utf8')
  assert.match(
    b,
    /### Features\n\n- Shared change\.\n {2}Second line\.\n\n### Refinements before the first release\n\n- Fix in b and c\.\n$/,
  )
  assert.ok(!existsSync(join(dir, 'packages/c/CHANGELOG.md')))

  // A later changeset for a is appended to the same entry, in order.
  changeset('four.md', { '@x/a': 'minor' }, 'Second feature of a.')
  foldChangesets(dir)
  const again = readFileSync(join(dir, 'packages/a/CHANGELOG.md'), 'utf8')
  assert.match(again, /- First feature of a\.\n- Second feature of a\.\n\n### Refinements/)
  assert.equal(again.match(/^## /gm).length, 1)
})

test('a changeset naming an unknown package stops the fold with its file name', () => {
  changeset('typo.md', { '@x/nope': 'patch' }, 'Oops.')
  assert.throws(() => foldChangesets(dir, { dryRun: true }), /typo\.md: names @x\/nope/)
  rmSync(join(dir, '.changeset/typo.md'))
})
