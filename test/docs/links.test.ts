import { existsSync, readFileSync, readdirSync, statSync } from 'node:fs'
import { dirname, join, relative, resolve } from 'node:path'
import { fileURLToPath } from 'node:url'
import t from 'tap'
import { proseLines } from '../helpers/docs/markdown-tables.js'

// The README is the front door and docs/ holds the rest: the door stays small, and no link in either points
// at a file or a heading that is not there.

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '../..')
const README_MAX_BYTES = 10_000
const PAGE_MAX_BYTES = 40_000

/** GitHub's heading anchor: lower case, punctuation dropped, spaces to hyphens, repeats numbered. */
export function headingAnchors(markdown: string): Set<string> {
  const anchors = new Set<string>()
  const seen = new Map<string, number>()
  for (const line of proseLines(markdown)) {
    const m = /^#{1,6}\s+(.*?)\s*#*\s*$/.exec(line)
    if (m === null) continue
    const base = (m[1] ?? '')
      .toLowerCase()
      .replace(/[^\p{L}\p{N}\s_-]/gu, '')
      .replace(/\s/g, '-')
    const n = seen.get(base) ?? 0
    seen.set(base, n + 1)
    anchors.add(n === 0 ? base : `${base}-${n}`)
  }
  return anchors
}

/** Every `[text](target)` link target in the prose of `markdown`. */
export function linkTargets(markdown: string): string[] {
  const targets: string[] = []
  for (const line of proseLines(markdown)) {
    const text = line.replace(/`[^`]*`/g, (s) => ' '.repeat(s.length)) // a link inside code is an example
    for (const m of text.matchAll(/\]\(([^)\s]+)(?:\s+"[^"]*")?\)/g)) targets.push(m[1] ?? '')
  }
  return targets
}

/** Why `target`, linked from `file`, does not resolve; undefined when it does. */
function brokenLink(file: string, target: string): string | undefined {
  if (/^[a-z][a-z0-9+.-]*:/i.test(target)) return undefined // http:, https:, mailto:
  const [path, anchor] = target.split('#', 2) as [string, string | undefined]
  const dest = path === '' ? file : resolve(dirname(file), decodeURIComponent(path))
  if (!existsSync(dest)) return 'no such file'
  if (anchor === undefined || anchor === '') return undefined
  if (statSync(dest).isDirectory() || !dest.endsWith('.md')) return 'an anchor into something that is not a page'
  return headingAnchors(readFileSync(dest, 'utf8')).has(anchor.toLowerCase()) ? undefined : `no heading #${anchor}`
}

/** The README, then every page under docs/, sub-folders included. */
function pages(): string[] {
  const docs = join(ROOT, 'docs')
  return [
    join(ROOT, 'README.md'),
    ...readdirSync(docs, { recursive: true, encoding: 'utf8' })
      .filter((f) => f.endsWith('.md'))
      .sort()
      .map((f) => join(docs, f)),
  ]
}

t.test('the README is a front door of at most 10 KB', async (t) => {
  const size = statSync(join(ROOT, 'README.md')).size
  t.ok(size <= README_MAX_BYTES, `README.md is ${size} bytes (at most ${README_MAX_BYTES}): move detail into docs/`)
})

t.test('no page in docs/ is over 40 KB', async (t) => {
  for (const page of pages().slice(1)) {
    const size = statSync(page).size
    t.ok(size <= PAGE_MAX_BYTES, `${relative(ROOT, page)} is ${size} bytes (at most ${PAGE_MAX_BYTES}): split it`)
  }
})

t.test('every relative link in the README and docs/ resolves, anchors included', async (t) => {
  let links = 0
  for (const file of pages()) {
    for (const target of linkTargets(readFileSync(file, 'utf8'))) {
      links++
      const problem = brokenLink(file, target)
      t.equal(problem, undefined, `${relative(ROOT, file)}: (${target})`)
    }
  }
  t.ok(links > 20, `${links} links checked`)
})

t.test('the README links the index, and the index docs/README.md links every other page in docs/', async (t) => {
  const readme = linkTargets(readFileSync(join(ROOT, 'README.md'), 'utf8')).map((l) => l.split('#')[0])
  t.ok(readme.includes('docs/README.md'), 'README links docs/README.md')
  const docs = join(ROOT, 'docs')
  const index = linkTargets(readFileSync(join(docs, 'README.md'), 'utf8')).map((l) => l.split('#')[0])
  for (const page of pages().slice(1)) {
    const path = relative(docs, page)
    if (path === 'README.md') continue
    t.ok(index.includes(path), `docs/README.md links ${path}`)
  }
})

t.test('the checker itself', async (t) => {
  t.strictSame(
    [...headingAnchors('# A `b` c\n## Start-up\n```\n# not a heading\n```\n## Start-up\n### Why: 20 ms?')],
    ['a-b-c', 'start-up', 'start-up-1', 'why-20-ms'],
  )
  t.strictSame(linkTargets('see [x](docs/a.md#b) and `[y](z)`\n```\n[c](d)\n```\n[e](https://e.example "t")'), [
    'docs/a.md#b',
    'https://e.example',
  ])
  t.equal(brokenLink(join(ROOT, 'README.md'), 'docs/no-such-page.md'), 'no such file')
  t.equal(brokenLink(join(ROOT, 'README.md'), '#no-such-heading-anywhere'), 'no heading #no-such-heading-anywhere')
  t.equal(brokenLink(join(ROOT, 'README.md'), 'docs/architecture.md'), undefined)
})

t.test("the README's first hour names the commands test/cli/first-hour.test.ts runs", async (t) => {
  const readme = readFileSync(join(ROOT, 'README.md'), 'utf8')
  const firstHour = readme.slice(readme.indexOf('## Your first hour'))
  // The commands, in order, as the test runs them (the folder is a temporary one there).
  const commands = ['npx voxgate init ../my-agent', 'cd ../my-agent', 'npm install && npm start', 'npx voxgate tunnel']
  let from = 0
  for (const command of commands) {
    const at = firstHour.indexOf(command, from)
    t.ok(at >= 0, `"${command}" in the first hour, after the one before`)
    from = Math.max(from, at)
  }
  t.match(readme, /npm install && npm start\s+# the gateway on http:\/\/localhost:8080/, 'the Quick start runs the gateway on 8080')
})
