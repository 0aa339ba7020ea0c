/**
 * sipp (Debian's sip-tester) for tests and the SIP load run: whether it is installed, the caller audio its
 * `rtp_stream` plays (the carrier bench's phrase as a PCMU WAV), one run of a scenario, and its statistics file.
 */
import { execFile, spawnSync } from 'node:child_process'
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { encodeMulaw } from '../../pipeline/audio/g711-mulaw.js'
import { loadFixture } from '../fixtures/audio/signals.js'

/** Why sipp tests are skipped here, or false where sipp is installed. */
export const sippMissing: string | false =
  spawnSync('sipp', ['-v']).error === undefined ? false : 'sipp is not installed (apt-get install sip-tester; .ci/run installs it)'

/** The path of a scenario in test/sip/fixtures/sipp/. */
export function sippScenario(name: string): string {
  return fileURLToPath(new URL(`../sip/fixtures/sipp/${name}.xml`, import.meta.url))
}

/** The phrase the carrier bench's phones say, as mu-law bytes (8 kHz). */
export function callerSpeech(): Buffer {
  const audio = loadFixture('phrase.wav')
  if (audio.sampleRate !== 8000) throw new Error(`phrase.wav is ${audio.sampleRate} Hz, the callers need 8000`)
  return Buffer.from(encodeMulaw(audio.samples))
}

/** A WAV file of G.711 mu-law (format 7), mono 8 kHz: what sipp's rtp_stream plays as payload type 0. */
export function pcmuWav(ulaw: Buffer): Buffer {
  const fmt = Buffer.alloc(26)
  fmt.write('fmt ', 0, 'ascii')
  fmt.writeUInt32LE(18, 4)
  fmt.writeUInt16LE(7, 8) // WAVE_FORMAT_MULAW
  fmt.writeUInt16LE(1, 10) // channels
  fmt.writeUInt32LE(8000, 12) // sample rate
  fmt.writeUInt32LE(8000, 16) // bytes per second
  fmt.writeUInt16LE(1, 20) // block align
  fmt.writeUInt16LE(8, 22) // bits per sample
  fmt.writeUInt16LE(0, 24) // no extra format bytes
  const fact = Buffer.alloc(12)
  fact.write('fact', 0, 'ascii')
  fact.writeUInt32LE(4, 4)
  fact.writeUInt32LE(ulaw.length, 8)
  const data = Buffer.alloc(8)
  data.write('data', 0, 'ascii')
  data.writeUInt32LE(ulaw.length, 4)
  const riff = Buffer.alloc(12)
  riff.write('RIFF', 0, 'ascii')
  riff.writeUInt32LE(4 + fmt.length + fact.length + data.length + ulaw.length, 4)
  riff.write('WAVE', 8, 'ascii')
  return Buffer.concat([riff, fmt, fact, data, ulaw])
}

/**
 * A fresh folder holding `caller.wav` (the scenario uac-rtp.xml plays it by that name, so sipp runs there) and
 * the statistics file's path.
 */
export function sippRunFolder(): { dir: string; statsFile: string } {
  const dir = mkdtempSync(join(tmpdir(), 'voxgate-sipp-'))
  writeFileSync(join(dir, 'caller.wav'), pcmuWav(callerSpeech()))
  return { dir, statsFile: join(dir, 'stats.csv') }
}

/** One sipp run: its exit code (0 only when every call passed) and the end of what it printed. */
export interface SippRun {
  code: number
  output: string
}

/** Runs sipp with `args` (scenario, target and all) in `cwd`, killed after `timeoutMs`; `onSpawn` hears its pid. */
export function runSipp(
  args: readonly string[],
  opts: { cwd?: string; timeoutMs: number; onSpawn?: (pid: number) => void },
): Promise<SippRun> {
  return new Promise((resolve) => {
    const child = execFile(
      'sipp',
      args,
      { cwd: opts.cwd, timeout: opts.timeoutMs, maxBuffer: 16 * 1024 * 1024 },
      (error, stdout, stderr) => {
        const code = error === null ? 0 : typeof error.code === 'number' ? error.code : -1
        resolve({ code, output: `${stdout}\n${stderr}`.slice(-3000) })
      },
    )
    if (child.pid !== undefined) opts.onSpawn?.(child.pid)
  })
}

/** Calls sipp counted in its last statistics line (`-trace_stat -stf file`). */
export interface SippCounts {
  created: number
  successful: number
  failed: number
}

/** The cumulative counts of the last line of sipp's statistics file (semicolon-separated, a header line first). */
export function readSippStats(file: string): SippCounts {
  const lines = readFileSync(file, 'utf8').trim().split('\n')
  const header = lines[0]?.split(';') ?? []
  const last = lines.at(-1)?.split(';') ?? []
  const count = (name: string): number => {
    const i = header.indexOf(name)
    if (i < 0 || lines.length < 2) throw new Error(`sipp's statistics file ${file} has no ${name}`)
    return Number(last[i])
  }
  return { created: count('TotalCallCreated'), successful: count('SuccessfulCall(C)'), failed: count('FailedCall(C)') }
}
