import type { OutputAudioFormat } from '../../audio/audio-format.js'
import type { EspeakEngine, EspeakVoiceSettings } from './espeak-engine.js'

/** Bytes of audio one engine's cache holds at most (~4 minutes of 16 kHz speech). */
export const SPEECH_CACHE_MAX_BYTES = 8 * 1024 * 1024
/** A sentence whose audio is longer than this is spoken but not kept (~30 s at 16 kHz). */
export const SPEECH_CACHE_MAX_ENTRY_BYTES = 1024 * 1024

/**
 * Sentences `tts.local` has already spoken, in the output format's sample rate, least recently used first out.
 * A contact centre's calls repeat the same lines (the welcome, "one moment", the fallback line): synthesis and
 * resampling cost ~10-600 ms of CPU per sentence (espeak-ng is synchronous asm.js), a lookup nothing. Bounded by
 * bytes, not entries. Entries are never handed out to be changed: callers copy what they pass on.
 */
export class SpeechCache {
  readonly #entries = new Map<string, Int16Array>()
  readonly #maxBytes: number
  readonly #maxEntryBytes: number
  #bytes = 0

  constructor(maxBytes = SPEECH_CACHE_MAX_BYTES, maxEntryBytes = SPEECH_CACHE_MAX_ENTRY_BYTES) {
    this.#maxBytes = maxBytes
    this.#maxEntryBytes = Math.min(maxEntryBytes, maxBytes)
  }

  /** Bytes held now. */
  get bytes(): number {
    return this.#bytes
  }

  get size(): number {
    return this.#entries.size
  }

  /** The audio of `sentence` spoken with `settings` in `format`, if kept; marks it most recently used. */
  get(format: OutputAudioFormat, settings: EspeakVoiceSettings, sentence: string): Int16Array | undefined {
    const key = keyOf(format, settings, sentence)
    const samples = this.#entries.get(key)
    if (samples === undefined) return undefined
    this.#entries.delete(key)
    this.#entries.set(key, samples)
    return samples
  }

  /** Keeps `samples` (the cache owns them from now on), dropping the least recently used beyond the bound. */
  set(format: OutputAudioFormat, settings: EspeakVoiceSettings, sentence: string, samples: Int16Array): void {
    if (samples.byteLength > this.#maxEntryBytes) return
    const key = keyOf(format, settings, sentence)
    const old = this.#entries.get(key)
    if (old !== undefined) {
      this.#entries.delete(key)
      this.#bytes -= old.byteLength
    }
    this.#entries.set(key, samples)
    this.#bytes += samples.byteLength
    for (const [oldest, audio] of this.#entries) {
      if (this.#bytes <= this.#maxBytes) break
      this.#entries.delete(oldest)
      this.#bytes -= audio.byteLength
    }
  }
}

function keyOf(format: OutputAudioFormat, settings: EspeakVoiceSettings, sentence: string): string {
  return `${format}\u0000${settings.voice}\u0000${settings.rate}\u0000${sentence}`
}

const caches = new WeakMap<EspeakEngine, SpeechCache>()

/** The cache of what `engine` spoke: one per engine, so a test's own engine never answers from another's. */
export function speechCacheOf(engine: EspeakEngine): SpeechCache {
  let cache = caches.get(engine)
  if (cache === undefined) {
    cache = new SpeechCache()
    caches.set(engine, cache)
  }
  return cache
}
