/**
 * A real SIP phone for tests: Debian's baresip (the `baresip-core` package), driven over its ctrl_tcp socket.
 *
 * Its microphone is a WAV file (the aufile module: 8 kHz mono PCM16; the call ends when the file does, so pad it for
 * a longer call) and what it hears is written to a WAV file by the sndfile filter (`heard()`: the decoded audio of
 * the far end, as the phone's speaker would get it). It speaks PCMU/PCMA with RTP and RFC 4733 DTMF, and hold and
 * resume by re-INVITE: the components the issue asks the SIP path to be tested with. Commands are baresip's own
 * (`dial`, `hangup`, `hold`, `resume`, `sndcode` for digits); call events (`CALL_ESTABLISHED`, `CALL_CLOSED`, ...)
 * come back on the same socket and a test waits on them.
 */
import { type ChildProcess, spawn } from 'node:child_process'
import { existsSync, mkdirSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs'
import { connect, type Socket } from 'node:net'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { freePort } from './nginx.js'

export const BARESIP_BIN = '/usr/bin/baresip'
const MODULES = '/usr/lib/baresip/modules'

/** Whether baresip (and the modules the phone needs) is installed. */
export function hasBaresip(): boolean {
  return (
    existsSync(BARESIP_BIN) &&
    ['aufile.so', 'sndfile.so', 'ctrl_tcp.so', 'g711.so', 'aubridge.so'].every((m) => existsSync(join(MODULES, m)))
  )
}

/** Whether baresip's SRTP module is installed (Debian ships it in baresip-core). */
export function hasBaresipSrtp(): boolean {
  return hasBaresip() && existsSync(join(MODULES, 'srtp.so'))
}

/** One event baresip sent (ctrl_tcp's JSON: `type` such as CALL_ESTABLISHED, CALL_CLOSED, CALL_DTMF_START). */
export interface PhoneEvent {
  readonly type: string
  readonly param?: string
  readonly [key: string]: unknown
}

export interface PhoneOptions {
  /** The microphone: an 8 kHz mono PCM16 WAV file. */
  readonly microphone: string
  /** The address the phone's SIP and RTP use (127.0.0.2 to call from an address no trunk allows). */
  readonly address?: string
  /** Codecs offered, in order (default PCMU). */
  readonly codecs?: readonly ('PCMU' | 'PCMA')[]
  /** The CA file that signed the gateway's TLS certificate, for calls to a `;transport=tls` URI. */
  readonly tlsCaFile?: string
  /** The account's media encryption (the srtp module): `srtp-mand` offers RTP/SAVP and nothing else. */
  readonly mediaenc?: 'srtp' | 'srtp-mand'
}

export interface Phone {
  /** Calls `uri` (`sip:+15550001111@127.0.0.1:5060`). */
  dial(uri: string): Promise<void>
  hangup(): Promise<void>
  hold(): Promise<void>
  resume(): Promise<void>
  /** Sends keypad digits as RFC 4733 events. */
  sendDigits(digits: string): Promise<void>
  /** The next event of `type` (events already received count), within `timeoutMs`. */
  waitFor(type: string, timeoutMs?: number): Promise<PhoneEvent>
  readonly events: readonly PhoneEvent[]
  /** The WAV file of what the phone heard in its last call (undefined before a call's audio started). */
  heard(): string | undefined
  /** What baresip printed (for a failure's message). */
  output(): string
  close(): Promise<void>
}

/** Starts a phone; `close()` it in a teardown. */
export async function startPhone(options: PhoneOptions): Promise<Phone> {
  // Its ports are picked free and bound by baresip a moment later: another test may take one in between (it did
  // once, in CI). baresip then exits at start, and the phone is started again on other ports.
  for (let attempt = 1; ; attempt++) {
    try {
      return await startPhoneOnce(options)
    } catch (e) {
      if (attempt >= 3 || !String(e).includes('Address already in use')) throw e
    }
  }
}

async function startPhoneOnce(options: PhoneOptions): Promise<Phone> {
  const dir = mkdtempSync(join(tmpdir(), 'baresip-'))
  const out = join(dir, 'heard')
  mkdirSync(out)
  const address = options.address ?? '127.0.0.1'
  const sipPort = await freePort()
  const ctrlPort = await freePort()
  const rtpBase = 20_000 + Math.floor(Math.random() * 20_000) * 2
  writeFileSync(
    join(dir, 'config'),
    [
      'poll_method epoll',
      `sip_listen ${address}:${sipPort}`,
      'sip_transports udp',
      // No sound card here: aubridge is a player that needs no device; sndfile writes what reaches it.
      'audio_player aubridge,nil',
      'audio_alert aubridge,nil',
      `audio_source aufile,${options.microphone}`,
      'ausrc_srate 8000',
      'auplay_srate 8000',
      'ausrc_channels 1',
      'auplay_channels 1',
      `rtp_ports ${rtpBase}-${rtpBase + 20}`,
      `module_path ${MODULES}`,
      'module g711.so',
      'module aufile.so',
      'module aubridge.so',
      'module sndfile.so',
      `snd_path ${out}`,
      'module_app account.so',
      'module_app menu.so',
      'module ctrl_tcp.so',
      `ctrl_tcp_listen 127.0.0.1:${ctrlPort}`,
      ...(options.tlsCaFile === undefined ? [] : [`sip_cafile ${options.tlsCaFile}`]),
      ...(options.mediaenc === undefined ? [] : ['module srtp.so']),
      '',
    ].join('\n'),
  )
  const codecs = (options.codecs ?? ['PCMU']).join(',')
  const mediaenc = options.mediaenc === undefined ? '' : `;mediaenc=${options.mediaenc}`
  writeFileSync(join(dir, 'accounts'), `<sip:caller@${address}>;regint=0;audio_codecs=${codecs}${mediaenc}\n`)

  let printed = ''
  const child: ChildProcess = spawn(BARESIP_BIN, ['-f', dir], { stdio: ['ignore', 'pipe', 'pipe'] })
  const keep = (chunk: Buffer) => {
    printed = (printed + chunk.toString()).slice(-64 * 1024)
  }
  child.stdout?.on('data', keep)
  child.stderr?.on('data', keep)
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()))

  let socket: Socket
  try {
    socket = await connectWhenListening(ctrlPort, exited, () => printed)
  } catch (e) {
    // A phone that did not start leaves nothing behind: its process and its folder.
    child.kill('SIGKILL')
    rmSync(dir, { recursive: true, force: true })
    throw e
  }
  const events: PhoneEvent[] = []
  const waiters: { type: string; from: number; wake: (e: PhoneEvent) => void }[] = []
  const pending = new Map<string, { resolve: () => void; reject: (e: Error) => void }>()
  let buffer = Buffer.alloc(0)
  socket.on('data', (chunk: Buffer) => {
    buffer = Buffer.concat([buffer, chunk])
    for (;;) {
      // Netstrings: `<length>:<payload>,`.
      const colon = buffer.indexOf(0x3a)
      if (colon < 0) break
      const length = Number(buffer.subarray(0, colon).toString())
      if (!Number.isInteger(length) || buffer.length < colon + 1 + length + 1) break
      const payload = buffer.subarray(colon + 1, colon + 1 + length).toString()
      buffer = buffer.subarray(colon + 1 + length + 1)
      let message: Record<string, unknown>
      try {
        message = JSON.parse(payload) as Record<string, unknown>
      } catch {
        continue
      }
      if (message.response === true) {
        const p = pending.get(String(message.token))
        pending.delete(String(message.token))
        if (message.ok === true) p?.resolve()
        else p?.reject(new Error(`baresip: ${String(message.data ?? 'command failed')}`))
      } else if (message.event === true) {
        const event = message as unknown as PhoneEvent
        events.push(event)
        for (const w of waiters.filter((x) => x.type === event.type)) {
          waiters.splice(waiters.indexOf(w), 1)
          w.wake(event)
        }
      }
    }
  })

  let tokens = 0
  const command = (name: string, params = '') =>
    new Promise<void>((resolve, reject) => {
      const token = String(++tokens)
      pending.set(token, { resolve, reject })
      const body = JSON.stringify({ command: name, params, token })
      socket.write(`${Buffer.byteLength(body)}:${body},`)
    })

  return {
    dial: (uri) => command('dial', uri),
    hangup: () => command('hangup'),
    hold: () => command('hold'),
    resume: () => command('resume'),
    sendDigits: async (digits) => {
      for (const d of digits) await command('sndcode', d)
    },
    events,
    waitFor(type, timeoutMs = 10_000) {
      const seen = events.find((e) => e.type === type)
      if (seen !== undefined) return Promise.resolve(seen)
      return new Promise((resolve, reject) => {
        const timer = setTimeout(() => {
          waiters.splice(waiters.indexOf(waiter), 1)
          reject(
            new Error(
              `baresip: no ${type} within ${timeoutMs} ms; events: ${events.map((e) => e.type).join(', ')}\n${printed.slice(-2000)}`,
            ),
          )
        }, timeoutMs)
        const waiter = {
          type,
          from: events.length,
          wake: (e: PhoneEvent) => {
            clearTimeout(timer)
            resolve(e)
          },
        }
        waiters.push(waiter)
      })
    },
    heard() {
      const dec = readdirSync(out).filter((f) => f.endsWith('-dec.wav'))
      return dec.length === 0 ? undefined : join(out, dec.sort().at(-1) as string)
    },
    output: () => printed,
    async close() {
      socket.destroy()
      if (child.exitCode === null && child.signalCode === null) {
        child.kill('SIGTERM')
        const killer = setTimeout(() => child.kill('SIGKILL'), 2_000)
        await exited
        clearTimeout(killer)
      }
      rmSync(dir, { recursive: true, force: true })
    },
  }
}

/** Connects to ctrl_tcp once baresip listens (it starts in ~50 ms); fails with its output if it exits first. */
async function connectWhenListening(port: number, exited: Promise<void>, printed: () => string): Promise<Socket> {
  let gone = false
  void exited.then(() => {
    gone = true
  })
  const deadline = performance.now() + 5_000
  for (;;) {
    if (gone) throw new Error(`baresip exited at start:\n${printed()}`)
    try {
      return await new Promise<Socket>((resolve, reject) => {
        const s = connect(port, '127.0.0.1', () => resolve(s))
        s.once('error', reject)
      })
    } catch (e) {
      if (performance.now() > deadline) throw new Error(`baresip's control socket did not open: ${String(e)}\n${printed()}`)
      await new Promise((r) => setTimeout(r, 25))
    }
  }
}
