/**
 * An agent's own hold music (`transfer.hold_audio_url`): fetched once per process through the egress policy (the
 * same rules as its webhooks), decoded (WAV with `wavefile`, MP3 with `mpg123-decoder`, a WebAssembly build of
 * libmpg123), mixed to mono, resampled to 8 and 16 kHz and kept, so every later transfer plays it from memory.
 * A file that cannot be fetched or decoded is logged and the built-in hold audio plays instead; it is tried again
 * by the next transfer.
 */
import { MPEGDecoder } from 'mpg123-decoder'
import wavefile from 'wavefile'
import type { Log } from '../../core/log.js'
import { Resampler } from '../../pipeline/index.js'

/** Largest file taken (a few minutes of MP3, half a minute of CD-quality WAV). */
export const MAX_HOLD_MUSIC_BYTES = 8 * 1024 * 1024
/** Longest music kept (it loops): more is cut. */
export const MAX_HOLD_MUSIC_SECONDS = 300
/** Files kept at most (one per agent that sets one); the oldest goes first. */
export const MAX_HOLD_MUSIC_FILES = 32
/** How long one download may take. */
const FETCH_TIMEOUT_MS = 10_000

/** A decoded hold music file, mono PCM16 at both rates the legs play. */
export interface HoldMusic {
  readonly pcm8k: Int16Array
  readonly pcm16k: Int16Array
}

/** Frame `index` (20 ms each) of `music` at `rate`, looping. */
export function holdMusicFrame(music: HoldMusic, rate: 8000 | 16000, index: number): Int16Array {
  const pcm = rate === 8000 ? music.pcm8k : music.pcm16k
  const n = (rate * 20) / 1000
  const out = new Int16Array(n)
  if (pcm.length === 0) return out
  for (let i = 0; i < n; i++) out[i] = pcm[(index * n + i) % pcm.length]!
  return out
}

/** Fetches a URL: the egress policy's fetch. */
export type HoldMusicFetch = (url: string, init: RequestInit) => Promise<Response>

/** The process's hold music files, by URL. */
export class HoldMusicCache {
  readonly #fetch: HoldMusicFetch
  readonly #files = new Map<string, Promise<HoldMusic | undefined>>()
  /** The files decoded so far, for a transfer to start with at once. */
  readonly #ready = new Map<string, HoldMusic>()
  /** Downloads so far (tests check that a file is fetched once). */
  fetches = 0

  constructor(fetch: HoldMusicFetch) {
    this.#fetch = fetch
  }

  /** The music at `url` if it is already decoded. */
  ready(url: string): HoldMusic | undefined {
    return this.#ready.get(url)
  }

  /** The music at `url`, fetched and decoded the first time; undefined when it cannot be had. */
  load(url: string, log: Log): Promise<HoldMusic | undefined> {
    const known = this.#files.get(url)
    if (known !== undefined) return known
    const loading = this.#download(url).then((music) => {
      this.#ready.set(url, music)
      return music
    })
    const settled = loading.catch((err: unknown) => {
      log.warn({ err: (err as Error).message }, 'hold music not usable: the built-in hold audio plays')
      this.#files.delete(url)
      return undefined
    })
    this.#files.set(url, settled)
    if (this.#files.size > MAX_HOLD_MUSIC_FILES) {
      const oldest = this.#files.keys().next().value as string
      this.#files.delete(oldest)
      this.#ready.delete(oldest)
    }
    return settled
  }

  async #download(url: string): Promise<HoldMusic> {
    this.fetches++
    const res = await this.#fetch(url, { method: 'GET', signal: AbortSignal.timeout(FETCH_TIMEOUT_MS), redirect: 'error' })
    if (!res.ok) throw new Error(`hold music answered ${res.status}`)
    const declared = Number(res.headers.get('content-length') ?? 0)
    if (declared > MAX_HOLD_MUSIC_BYTES) throw new Error(`hold music larger than ${MAX_HOLD_MUSIC_BYTES} bytes`)
    const bytes = new Uint8Array(await res.arrayBuffer())
    if (bytes.length > MAX_HOLD_MUSIC_BYTES) throw new Error(`hold music larger than ${MAX_HOLD_MUSIC_BYTES} bytes`)
    const { mono, rate } = await decodeAudioFile(bytes)
    const cut = mono.subarray(0, Math.min(mono.length, rate * MAX_HOLD_MUSIC_SECONDS))
    return { pcm8k: resampleTo(cut, rate, 8000), pcm16k: resampleTo(cut, rate, 16000) }
  }
}

/** A WAV or MP3 file as mono float samples and their rate. */
export async function decodeAudioFile(bytes: Uint8Array): Promise<{ mono: Float32Array; rate: number }> {
  const head = Buffer.from(bytes.subarray(0, 4)).toString('latin1')
  if (head === 'RIFF') {
    const wav = new wavefile.WaveFile(bytes)
    wav.toBitDepth('32f')
    const fmt = wav.fmt as { sampleRate: number; numChannels: number }
    const samples = wav.getSamples(false, Float64Array) as unknown as Float64Array | Float64Array[]
    const channels = Array.isArray(samples) ? samples : [samples]
    return { mono: mixdown(channels), rate: fmt.sampleRate }
  }
  // MP3: an ID3 tag, or a frame sync (11 set bits) at the start.
  if (head.startsWith('ID3') || (bytes[0] === 0xff && (bytes[1]! & 0xe0) === 0xe0)) {
    const decoder = new MPEGDecoder()
    await decoder.ready
    try {
      const out = decoder.decode(bytes)
      if (out.samplesDecoded === 0) throw new Error('no MP3 audio in the file')
      return { mono: mixdown(out.channelData), rate: out.sampleRate }
    } finally {
      decoder.free()
    }
  }
  throw new Error('hold music is neither WAV nor MP3')
}

function mixdown(channels: ArrayLike<number>[]): Float32Array {
  const first = channels[0]
  if (first === undefined) return new Float32Array(0)
  const out = new Float32Array(first.length)
  for (const ch of channels) for (let i = 0; i < out.length; i++) out[i]! += (ch[i] ?? 0) / channels.length
  return out
}

/** Float samples (-1..1) at `from` Hz as PCM16 at `to` Hz, lookahead flushed. */
function resampleTo(input: Float32Array, from: number, to: number): Int16Array {
  const scaled = new Float32Array(input.length)
  for (let i = 0; i < input.length; i++) scaled[i] = Math.max(-1, Math.min(1, input[i]!)) * 32767
  let samples: Float32Array
  if (from === to) samples = scaled
  else {
    const r = new Resampler({ from, to })
    const a = r.process(scaled)
    const head = Float32Array.from(a)
    const tail = r.flush()
    samples = new Float32Array(head.length + tail.length)
    samples.set(head)
    samples.set(tail, head.length)
  }
  return Int16Array.from(samples, (v) => Math.round(Math.max(-32768, Math.min(32767, v))))
}
