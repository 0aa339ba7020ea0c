/**
 * The log flush at exit always ends: lines buffered when the process exits are written to a live stdout, and
 * given up at once when stdout's reader is gone (EPIPE), where sonic-boom's own flushSync retries for ever.
 * No database: the same on both.
 */
import t from 'tap'
import { spawn } from 'node:child_process'
import { boundedFlushSync } from '../../core/log-exit-flush.js'
import { stdoutLogDestination } from '../../core/log.js'
import { nodeScript } from '../helpers/node-script.js'

const child = new URL('../helpers/log-exit-child.ts', import.meta.url)
// Each case starts a node process through tsx: seconds on a busy machine. A child that hangs is killed at 90 s.
t.setTimeout(240_000)

/** Starts the child; `readerGone`: its stdout's reading end is closed before it logs anything. */
function run(readerGone: boolean, lines: number) {
  const proc = spawn(process.execPath, nodeScript(child), {
    env: { ...process.env, LINES: String(lines), EXIT_CODE: '3' },
    stdio: ['pipe', 'pipe', 'pipe'],
  })
  let out = ''
  let err = ''
  proc.stderr.on('data', (d: Buffer) => (err += d.toString()))
  const exited = new Promise<{ code: number | null; signal: string | null; ms: number }>((resolve) => {
    let goAt = 0
    proc.once('spawn', () => {
      // tsx needs a moment to load the module: the child reads stdin only once it is running.
      if (readerGone) proc.stdout.destroy()
      else proc.stdout.on('data', (d: Buffer) => (out += d.toString()))
      goAt = Date.now()
      proc.stdin.write('go\n')
    })
    proc.once('exit', (code, signal) => resolve({ code, signal, ms: Date.now() - goAt }))
  })
  const killer = setTimeout(() => proc.kill('SIGKILL'), 90_000)
  return {
    exited: exited.finally(() => clearTimeout(killer)),
    out: () => out,
    err: () => err,
  }
}

t.test('a live stdout gets every line buffered at exit', async (t) => {
  const r = run(false, 200)
  const e = await r.exited
  t.same({ code: e.code, signal: e.signal }, { code: 3, signal: null }, 'exits with its own code')
  const seen = new Set(
    r
      .out()
      .split('\n')
      .filter((l) => l !== '')
      .map((l) => JSON.parse(l).i as number),
  )
  // Line 0 is the asynchronous write in flight at exit: the kernel's already, or never (as with sonic-boom's own).
  const missing = Array.from({ length: 199 }, (_, k) => k + 1).filter((i) => !seen.has(i))
  t.same(missing, [], 'lines 1-199 were all written by the exit flush')
})

t.test('stdout whose reader is gone: the exit flush gives the lines up and the process exits', async (t) => {
  const r = run(true, 200)
  const e = await r.exited
  t.same(
    { code: e.code, signal: e.signal },
    { code: 3, signal: null },
    `exits with its own code (${e.ms} ms; stderr: ${r.err().slice(0, 300)})`,
  )
  t.notMatch(r.err(), /EPIPE|Unhandled/, 'no crash report')
})

t.test('boundedFlushSync against the installed sonic-boom: each line once; a write error gives up at once', async (t) => {
  const { readFileSync, writeFileSync, mkdtempSync, openSync } = await import('node:fs')
  const { tmpdir } = await import('node:os')
  const { join } = await import('node:path')
  const file = join(mkdtempSync(join(tmpdir(), 'log-exit-')), 'out.log')
  writeFileSync(file, '')
  // The production destination, so pino's own exit flush in this process is the bounded one too.
  const dest = stdoutLogDestination(openSync(file, 'a'))
  await new Promise((r) => dest.once('ready', r))
  dest.write('one\n')
  dest.write('two\n')
  dest.write('three\n')
  // 'one' is in an asynchronous write; 'two' and 'three' wait in sonic-boom's buffer.
  boundedFlushSync(dest)
  await new Promise((r) => setTimeout(r, 100))
  // 'one' may land after the others (the thread pool writes it when it gets to it): once each, the rest in order.
  const lines = readFileSync(file, 'utf8')
    .split('\n')
    .filter((l) => l !== '')
  t.same([...lines].sort(), ['one', 'three', 'two'], `each line once (${lines.join(', ')})`)
  t.ok(lines.indexOf('two') < lines.indexOf('three'), 'the buffered lines in order')
  dest.end()

  // /dev/full fails every write (ENOSPC): like EPIPE, not a full pipe, and sonic-boom's own loop would retry it for ever.
  const full = stdoutLogDestination(openSync('/dev/full', 'w'))
  await new Promise((r) => full.once('ready', r))
  full.write('four\n')
  full.write('five\n')
  const started = Date.now()
  boundedFlushSync(full)
  t.ok(Date.now() - started < 50, `returns at once (${Date.now() - started} ms)`)
})
