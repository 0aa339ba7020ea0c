// Puts short unit test files together into one process each, for bin/test.js.
//
// Why: every test process pays ~0.2 s of CPU before its first test (Node, tap and its plugins, the bundle's shared
// chunks) and a file that opens the test database pays for its own PGlite; a hundred short unit files spent ~25 s
// of CPU on that, a tenth of the suite's, and ran near the end of the run one or two at a time. A test file is a
// tap program whose tests are subtests of tap's root: several imported into one program are still the same
// subtests, counted the same, each run in the order of its file, and a failure names its source file and line.
//
// Only files that cannot tell they share a process are put together: a batch file (short, busy, no child
// processes: see test-pool.js) whose source has no root hook (`t.before`, `t.beforeEach`, ... would run around the
// other files' tests too), no top-level await (its set-up would run while another file's tests run), and does not
// change the process (environment, working directory, globals, mocks, clocks). A new file runs alone until its
// first run's times say what it is.
import { readFileSync } from 'node:fs'
import { isBatch } from './test-pool.js'

/** A group's files keep a core busy for about this long (their last CPU times added up). */
export const GROUP_CPU_MS = 3_000
/** At most this many files in one group. */
export const GROUP_MAX_FILES = 12

/** What in a test file's source keeps it in a process of its own: a reason for each, or undefined when none. */
const ALONE = [
  [/^t\.(before|beforeEach|after|afterEach|plan|setTimeout|jobs|teardown)\(/m, 'a root hook or setting'],
  [/^(?:export\s+)?(?:const|let|var)\s[^\n]*\bawait\b|^await\b|^for await\b/m, 'top-level await'],
  [/\bprocess\.(env\.[A-Za-z_]+\s*=(?!=)|env\[[^\]]+\]\s*=(?!=)|chdir|on\(|once\(|exitCode|umask)/, 'changes the process'],
  [/\bdelete process\.env\b|\bObject\.assign\(process\.env\b/, 'changes the environment'],
  [/\bglobalThis\.[\w$]+\s*=(?!=)|\bt\.(mockImport|mockRequire|mockAll|chdir|intercept|capture|clock)\b/, 'changes globals'],
]

/** Why `source` (a test file's text) must run in a process of its own, or undefined when it may share one. */
export function aloneBecause(source) {
  for (const [rule, why] of ALONE) if (rule.test(source)) return why
  return undefined
}

/**
 * Splits `files` (in run order) into the jobs to run: a file alone, or a group of files that may share a process
 * (see above), each group's last CPU times adding up to about GROUP_CPU_MS. Groups keep the run order of their first
 * file; a group of one is a file alone. `readSource` reads a file's text.
 */
export function groupFiles(files, times, readSource = (f) => readFileSync(f, 'utf8')) {
  const jobs = []
  let open
  for (const file of files) {
    const t = times[file]
    if (!isBatch(t) || aloneBecause(readSource(file)) !== undefined) {
      jobs.push([file])
      continue
    }
    if (open === undefined || open.cpuMs + (t.cpuMs ?? 0) > GROUP_CPU_MS || open.files.length >= GROUP_MAX_FILES) {
      open = { files: [], cpuMs: 0 }
      jobs.push(open.files)
    }
    open.files.push(file)
    open.cpuMs += t.cpuMs ?? 0
  }
  return jobs
}

/** The name a group's line carries in the run's output: its first file and how many more. */
export function groupName(files) {
  return files.length === 1 ? files[0] : `${files[0]} (+${files.length - 1} in its process: ${files.slice(1).join(', ')})`
}

/**
 * A group's measured times shared out to its files, in proportion to their last CPU times (a file alone keeps its
 * own): what the next run's weights and order read.
 */
export function shareTimes(files, measured, last) {
  if (files.length === 1) return { [files[0]]: measured }
  const total = files.reduce((s, f) => s + (last[f]?.cpuMs ?? 0), 0)
  const share = (f) => (total > 0 ? (last[f]?.cpuMs ?? 0) / total : 1 / files.length)
  const part = (ms, f) => Math.round((ms ?? 0) * share(f))
  return Object.fromEntries(
    files.map((f) => [
      f,
      { wallMs: part(measured.wallMs, f), cpuMs: part(measured.cpuMs, f), childCpuMs: part(measured.childCpuMs, f), rssMb: measured.rssMb },
    ]),
  )
}
