import { readdirSync, readFileSync } from 'node:fs'
import { dirname, join, relative, resolve } from 'node:path'
import { fileURLToPath } from 'node:url'
import t from 'tap'

// What a user reads (the README, docs/, source comments) speaks of features, not of the project's internal issue
// numbers, and states facts without dates relative to the day a line was written: history belongs in the dated log at
// the end of docs/benchmarks.md (from its first heading with "log" in it), which is the one place left alone.

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '../..')

/** Folders whose code comments are read (test fixtures, data for tests, are not). */
const CODE_DIRS = [
  'api',
  'bench',
  'bin',
  'carrier',
  'cli',
  'core',
  'gateway',
  'pipeline',
  'server',
  'transports',
  'test',
  'client/src',
  'client/test',
]
const SKIPPED = new Set(['node_modules', 'fixtures', 'dist', 'artifacts'])

/** What a reader should not meet: an issue number, or a date relative to when it was written. */
const RULES: { name: string; pattern: RegExp }[] = [
  { name: 'an issue number', pattern: /\bissues? #?\d+\b|(?<![\w/&#])#\d{1,4}(?![\w-])/i },
  { name: 'a relative date', pattern: /\b(today|tonight|yesterday|this (morning|afternoon|evening))\b/i },
]

/** The problems of one text: `<line>: <rule>: <the line>`. */
export function problems(text: string): string[] {
  const out: string[] = []
  text.split('\n').forEach((line, i) => {
    for (const rule of RULES) if (rule.pattern.test(line)) out.push(`${i + 1}: ${rule.name}: ${line.trim().slice(0, 160)}`)
  })
  return out
}

/**
 * The comments of a source text, other lines blanked (line numbers kept): `//` to the end of a line, and block
 * comments. Strings are skipped well enough for this purpose (a `//` inside a string on a line is rare and only
 * makes a comment of the rest of that line).
 */
export function commentsOf(source: string): string {
  const lines = source.split('\n')
  let inBlock = false
  return lines
    .map((line) => {
      let out = ''
      let rest = line
      while (rest !== '') {
        if (inBlock) {
          const end = rest.indexOf('*/')
          out += end < 0 ? rest : rest.slice(0, end)
          if (end < 0) return out
          inBlock = false
          rest = rest.slice(end + 2)
          continue
        }
        const code = rest.replace(/'(?:\\.|[^'\\])*'|"(?:\\.|[^"\\])*"|`(?:\\.|[^`\\])*`/g, (s) => ' '.repeat(s.length))
        const lineComment = code.search(/\/\//)
        const block = code.search(/\/\*/)
        if (block >= 0 && (lineComment < 0 || block < lineComment)) {
          inBlock = true
          rest = rest.slice(block + 2)
          continue
        }
        if (lineComment >= 0) out += rest.slice(lineComment + 2)
        return out
      }
      return out
    })
    .join('\n')
}

/**
 * The prose of a page a reader should check: code (fenced blocks, inline code spans: an example's words are not the
 * page's) blanked, and for docs/benchmarks.md, everything before its dated log.
 */
export function readerText(path: string, text: string): string {
  let lines = text.split('\n')
  if (path === 'docs/benchmarks.md') {
    const log = lines.findIndex((line) => /^#{1,6}\s.*\blog\b/i.test(line))
    if (log >= 0) lines = lines.slice(0, log)
  }
  let fenced = false
  return lines
    .map((line) => {
      if (/^\s*```/.test(line)) {
        fenced = !fenced
        return ''
      }
      return fenced ? '' : line.replace(/`[^`]*`/g, (s) => ' '.repeat(s.length))
    })
    .join('\n')
}

function files(dir: string, ext: RegExp): string[] {
  let entries: import('node:fs').Dirent[]
  try {
    entries = readdirSync(join(ROOT, dir), { withFileTypes: true })
  } catch {
    return []
  }
  return entries.flatMap((e) => {
    const path = join(dir, e.name)
    if (e.isDirectory()) return SKIPPED.has(e.name) ? [] : files(path, ext)
    return ext.test(e.name) ? [path] : []
  })
}

t.test('the checks themselves', async (t) => {
  t.strictSame(problems('done in issue 28, see #15'), ['1: an issue number: done in issue 28, see #15'])
  t.strictSame(problems('measured this morning'), ['1: a relative date: measured this morning'])
  t.strictSame(problems('see [x](benchmarks.md#2026-11-29-later) and HTTP/1.1 #fragment, colour #fff'), [])
  t.equal(commentsOf("const a = 'http://x' // issue 5\n/* b\n c */ d"), ' issue 5\n b\n c ')
  t.equal(readerText('docs/benchmarks.md', '# B\ntoday\n## Dated log\ntoday'), '# B\ntoday')
  t.equal(readerText('docs/a.md', 'say `today`\n```\ntoday\n```'), 'say        \n\n\n')
})

t.test('no issue number or relative date in the README, docs/ or source comments', async (t) => {
  const pages = ['README.md', ...files('docs', /\.md$/)]
  const sources = CODE_DIRS.flatMap((d) => files(d, /\.(ts|js|mjs)$/))
  t.ok(sources.length > 300, `${sources.length} source files, ${pages.length} pages`)
  for (const page of pages) {
    t.strictSame(problems(readerText(page, readFileSync(join(ROOT, page), 'utf8'))), [], page)
  }
  for (const source of sources) {
    const found = problems(commentsOf(readFileSync(join(ROOT, source), 'utf8')))
    if (found.length > 0) t.strictSame(found, [], `comments of ${relative(ROOT, join(ROOT, source))}`)
  }
})

/** Files outside the repository a page may not send its reader to: the design notes it was built from. */
const OUTSIDE = /\.\.\/shared\b|\b(SPEC|ARCHITECTURE|PROTOCOLS|STYLE|STACK-NOTES)\.md\b/

t.test('no page of the README or docs/ points at a file outside the repository', async (t) => {
  t.ok(OUTSIDE.test('see ../shared/SPEC.md') && OUTSIDE.test('the ARCHITECTURE.md note') && !OUTSIDE.test('docs/architecture.md'))
  for (const page of ['README.md', ...files('docs', /\.md$/)]) {
    const lines = readFileSync(join(ROOT, page), 'utf8').split('\n')
    const found = lines.flatMap((line, i) => (OUTSIDE.test(line) ? [`${i + 1}: ${line.trim().slice(0, 160)}`] : []))
    t.strictSame(found, [], page)
  }
})
