/**
 * A second real SIP stack for tests: Debian's linphonec (package linphone-cli, liblinphone 5.x over belle-sip,
 * bzrtp/libsrtp2 for media), driven by commands on its standard input.
 *
 * Two things it needs that its help does not say: a writable `~/.local/share/linphone` (without it liblinphone
 * cannot open its database and never starts its SIP stack: no listening point, `ports` says 0, and a call fails with
 * "No listening point matching for tls://..."), so HOME is a folder of the phone's own; and `soundcard use files`,
 * since there is no sound card here: the microphone is then a WAV file (`play`) and what the phone hears is written to
 * another (`record`, 8 kHz mono PCM16 as decoded, before any speaker). Call progress comes back as lines on its
 * standard output ("Call 1 ... connected.", "Call 1 ... ended"); its liblinphone log (level 6) goes to a file a test
 * reads after the call (the SRTP suite, the keep-alives it sent).
 */
import { type ChildProcess, spawn } from 'node:child_process'
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'

export const LINPHONEC_BIN = '/usr/bin/linphonec'

/** Whether linphonec is installed. */
export function hasLinphone(): boolean {
  return existsSync(LINPHONEC_BIN)
}

export interface LinphoneOptions {
  /** The microphone: an 8 kHz mono PCM16 WAV file. */
  readonly microphone: string
  /** The CA that signed the gateway's certificate: linphone checks the server's certificate against it. */
  readonly tlsCaFile: string
  /** SDES-keyed SRTP, mandatory (RTP/SAVP offered, nothing else); plain RTP when false. */
  readonly srtp: boolean
  /** Seconds between keep-alives on the SIP connection (liblinphone's `keepalive_period`, default 30 s). */
  readonly keepAliveS?: number
}

/** A running linphonec. */
export interface Linphone {
  /** Calls `uri` (`sip:+1...@127.0.0.1:5061;transport=tls`). */
  call(uri: string): void
  hangup(): void
  /** Sends keypad digits in the current call (RFC 4733 events: `use_rfc2833` is on, SIP INFO off). */
  sendDigits(digits: string): void
  /** Resolves with the first line of its output matching `pattern` from `from` on, within `timeoutMs`. */
  waitFor(pattern: RegExp, timeoutMs?: number, from?: number): Promise<string>
  /** Its console output so far. */
  output(): string
  /** Its liblinphone log so far (level 6: SIP messages, SRTP set-up). */
  log(): string
  /** The WAV file of what it heard in the current or last call. */
  readonly heardFile: string
  close(): Promise<void>
}

/** Starts linphonec; `close()` it in a teardown. */
export async function startLinphone(options: LinphoneOptions): Promise<Linphone> {
  const dir = mkdtempSync(join(tmpdir(), 'linphone-'))
  mkdirSync(join(dir, '.local', 'share', 'linphone'), { recursive: true })
  const rc = join(dir, 'linphonerc')
  const logFile = join(dir, 'linphone.log')
  const heardFile = join(dir, 'heard.wav')
  const rtpBase = 20_000 + Math.floor(Math.random() * 20_000) * 2
  writeFileSync(
    rc,
    [
      '[sip]',
      // -1: a random free port for each transport; the phone only calls out, so which one does not matter.
      'sip_port=-1',
      'sip_tcp_port=-1',
      'sip_tls_port=-1',
      `root_ca=${options.tlsCaFile}`,
      'verify_server_certs=1',
      'verify_server_cn=0',
      'contact=sip:linphone@127.0.0.1',
      `media_encryption=${options.srtp ? 'srtp' : 'none'}`,
      `media_encryption_mandatory=${options.srtp ? 1 : 0}`,
      `keepalive_period=${(options.keepAliveS ?? 30) * 1000}`,
      'register_only_when_network_is_up=0',
      'use_rfc2833=1',
      'use_info=0',
      '[rtp]',
      `audio_rtp_port=${rtpBase}`,
      '[sound]',
      'echocancellation=0',
      // G.711 only: what the gateway answers anyway, and what the recording is decoded from.
      ...codecs(),
      '',
    ].join('\n'),
  )
  let printed = ''
  const child: ChildProcess = spawn(LINPHONEC_BIN, ['-c', rc, '-d', '6', '-l', logFile], {
    stdio: ['pipe', 'pipe', 'pipe'],
    env: { ...process.env, HOME: dir },
  })
  const waiters: { pattern: RegExp; from: number; wake: (line: string) => void }[] = []
  const keep = (chunk: Buffer) => {
    printed += chunk.toString()
    if (printed.length > 256 * 1024) printed = printed.slice(-128 * 1024)
    for (const w of [...waiters]) {
      const line = matchFrom(printed, w.pattern, w.from)
      if (line === undefined) continue
      waiters.splice(waiters.indexOf(w), 1)
      w.wake(line)
    }
  }
  child.stdout?.on('data', keep)
  child.stderr?.on('data', keep)
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()))
  const send = (line: string) => child.stdin?.write(`${line}\n`)

  const waitFor = (pattern: RegExp, timeoutMs = 10_000, from = 0) => {
    const seen = matchFrom(printed, pattern, from)
    if (seen !== undefined) return Promise.resolve(seen)
    return new Promise<string>((resolve, reject) => {
      const timer = setTimeout(() => {
        waiters.splice(waiters.indexOf(waiter), 1)
        reject(new Error(`linphonec: nothing matched ${String(pattern)} within ${timeoutMs} ms\n${printed.slice(-3000)}`))
      }, timeoutMs)
      const waiter = {
        pattern,
        from,
        wake: (line: string) => {
          clearTimeout(timer)
          resolve(line)
        },
      }
      waiters.push(waiter)
    })
  }

  send('soundcard use files')
  send(`play ${options.microphone}`)
  send(`record ${heardFile}`)
  // `ports` answers once the core is on and its transports listen: a phone that could not start fails here.
  send('ports')
  await waitFor(/sip port = [1-9]/, 10_000).catch(async (e) => {
    child.kill('SIGKILL')
    await exited
    rmSync(dir, { recursive: true, force: true })
    throw e
  })

  return {
    call: (uri) => send(`call ${uri}`),
    hangup: () => send('terminate'),
    // linphonec reads a line of digits (0-9, *, #) typed during a call as keypad presses.
    sendDigits: (digits) => send(digits),
    waitFor,
    output: () => printed,
    log: () => (existsSync(logFile) ? readFileSync(logFile, 'utf8') : ''),
    heardFile,
    async close() {
      if (child.exitCode === null && child.signalCode === null) {
        send('quit')
        const killer = setTimeout(() => child.kill('SIGKILL'), 3_000)
        await exited
        clearTimeout(killer)
      }
      rmSync(dir, { recursive: true, force: true })
    },
  }
}

function matchFrom(text: string, pattern: RegExp, from: number): string | undefined {
  return pattern.exec(text.slice(from))?.[0]
}

function codecs(): string[] {
  const on = ['PCMU', 'PCMA']
  const off = ['opus/48000', 'speex/16000', 'speex/8000', 'GSM/8000', 'G722/8000', 'G729/8000', 'speex/32000', 'L16/44100']
  return [
    ...on.map((mime, i) => `[audio_codec_${i}]\nmime=${mime}\nrate=8000\nchannels=1\nenabled=1`),
    ...off.map((m, i) => {
      const [mime, rate] = m.split('/')
      return `[audio_codec_${on.length + i}]\nmime=${mime}\nrate=${rate}\nchannels=${mime === 'opus' ? 2 : 1}\nenabled=0`
    }),
  ]
}
