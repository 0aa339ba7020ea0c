/** npm package of the espeak-ng build; GPL-3.0, so an optional dependency loaded only when `tts.local` is used. */
export const ESPEAK_PACKAGE = '@echogarden/espeak-ng-emscripten'

/** Sample rate espeak-ng synthesizes at (PCM16 mono). */
export const ESPEAK_SAMPLE_RATE = 22_050

/** Voice and speaking rate of one synthesis call. */
export interface EspeakVoiceSettings {
  /** espeak-ng voice or language name, e.g. `en-us`, `de`. */
  voice: string
  /** Words per minute (espeak-ng accepts 80 to 450). */
  rate: number
}

/**
 * A loaded espeak-ng instance. Synthesis is synchronous (the build is asm.js, no threads): callers keep the text of
 * one call short (a sentence) and yield to the event loop between calls.
 */
export interface EspeakEngine {
  readonly sampleRate: number
  /** Milliseconds it took to import and initialise the module. */
  readonly loadMs: number
  /** Whether espeak-ng knows the voice. */
  hasVoice(voice: string): boolean
  /** Speak `text` into PCM16 samples at {@link sampleRate}; throws {@link EspeakError} for an unknown voice. */
  synthesize(text: string, settings: EspeakVoiceSettings): Int16Array
}

/** Why espeak-ng could not be used: the package is missing or broken, or the voice does not exist. */
export class EspeakError extends Error {
  readonly code: 'tts_local_unavailable' | 'tts_local_voice_unknown'

  constructor(code: EspeakError['code'], message: string, options?: { cause?: unknown }) {
    super(message, options)
    this.name = 'EspeakError'
    this.code = code
  }
}

// The package ships no type declarations; these are the members of its Emscripten bindings used here.
interface EspeakWorker {
  set_voice(name: string): number
  set_rate(wordsPerMinute: number): void
  synthesize(text: string, onChunk: (samples: Int16Array, events: unknown[]) => boolean | undefined): void
}
interface EspeakModule {
  eSpeakNGWorker: new () => EspeakWorker
}
type EspeakFactory = (moduleArg?: object) => Promise<EspeakModule>

/** espeak-ng's `EE_OK`; `set_voice` answers `EE_NOT_FOUND` (2) for an unknown voice. */
const EE_OK = 0

class WasmEspeakEngine implements EspeakEngine {
  readonly sampleRate = ESPEAK_SAMPLE_RATE
  readonly loadMs: number
  readonly #worker: EspeakWorker
  readonly #voices = new Map<string, boolean>()
  // The worker is shared by every stream, so settings are applied per call; these skip redundant calls.
  #voice: string | undefined
  #rate: number | undefined

  constructor(worker: EspeakWorker, loadMs: number) {
    this.#worker = worker
    this.loadMs = loadMs
  }

  hasVoice(voice: string): boolean {
    const known = this.#voices.get(voice)
    if (known !== undefined) return known
    return this.#selectVoice(voice)
  }

  synthesize(text: string, settings: EspeakVoiceSettings): Int16Array {
    if (this.#voice !== settings.voice && !this.#selectVoice(settings.voice)) {
      throw new EspeakError('tts_local_voice_unknown', `espeak-ng has no voice "${settings.voice}"`)
    }
    if (this.#rate !== settings.rate) {
      this.#worker.set_rate(settings.rate)
      this.#rate = settings.rate
    }
    const chunks: Int16Array[] = []
    let total = 0
    this.#worker.synthesize(text, (samples) => {
      chunks.push(samples)
      total += samples.length
      return false // true would abort the synthesis
    })
    const out = new Int16Array(total)
    let offset = 0
    for (const chunk of chunks) {
      out.set(chunk, offset)
      offset += chunk.length
    }
    return out
  }

  #selectVoice(voice: string): boolean {
    const ok = this.#worker.set_voice(voice) === EE_OK
    this.#voices.set(voice, ok)
    // A failed set_voice may leave espeak-ng on some other voice: force the next call to set it again.
    this.#voice = ok ? voice : undefined
    return ok
  }
}

/**
 * Import and initialise a new espeak-ng instance from `specifier`. Costs 260-480 ms and ~60 MB (the 24 MB voice data is
 * read into the module's in-memory file system); use {@link sharedEspeakEngine} in production.
 * Rejects with an {@link EspeakError} `tts_local_unavailable` when the package is missing or fails to start.
 */
export async function loadEspeakEngine(specifier: string = ESPEAK_PACKAGE): Promise<EspeakEngine> {
  const started = performance.now()
  let factory: EspeakFactory
  try {
    const imported = (await import(specifier)) as { default?: unknown }
    if (typeof imported.default !== 'function') throw new TypeError(`${specifier} has no default export factory`)
    factory = imported.default as EspeakFactory
  } catch (error) {
    throw new EspeakError(
      'tts_local_unavailable',
      `tts.local needs the optional package ${specifier} (npm install ${ESPEAK_PACKAGE}): ${describe(error)}`,
      { cause: error },
    )
  }
  try {
    const module = await factory()
    const worker = new module.eSpeakNGWorker()
    return new WasmEspeakEngine(worker, performance.now() - started)
  } catch (error) {
    throw new EspeakError('tts_local_unavailable', `espeak-ng failed to start: ${describe(error)}`, { cause: error })
  }
}

let shared: Promise<EspeakEngine> | undefined

/**
 * The process-wide espeak-ng instance, loaded on first use and shared by every `tts.local` stream. A failed load
 * is not cached, so installing the package later works without a restart.
 */
export function sharedEspeakEngine(): Promise<EspeakEngine> {
  if (shared === undefined) {
    const loading = loadEspeakEngine()
    shared = loading
    loading.catch(() => {
      if (shared === loading) shared = undefined
    })
  }
  return shared
}

function describe(error: unknown): string {
  return error instanceof Error ? error.message : String(error)
}
