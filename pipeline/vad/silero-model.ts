import { readFile } from 'node:fs/promises'
import { createRequire } from 'node:module'
import { dirname, join } from 'node:path'
import type * as Ort from 'onnxruntime-node'
import { foldBatchIntoConvs } from './conv-as-matmul.js'

/** Sample rates Silero v5 runs at natively. */
export type SileroSampleRate = 8000 | 16000

/** Floats of recurrent state per stream (2 x 128). */
export const SILERO_STATE_SIZE = 256

/** Samples per frame at each model rate (32 ms). */
export function sileroFrameSamples(sampleRate: SileroSampleRate): number {
  return sampleRate === 16000 ? 512 : 256
}

/** Samples of the previous frame prepended to each frame (as silero-vad's OnnxWrapper and vad-web do). */
export function sileroContextSamples(sampleRate: SileroSampleRate): number {
  return sampleRate === 16000 ? 64 : 32
}

/** Path of the Silero v5 model shipped by @ricky0123/vad-web. */
export function defaultSileroModelPath(): string {
  const req = createRequire(import.meta.url)
  return join(dirname(req.resolve('@ricky0123/vad-web/package.json')), 'dist', 'silero_vad_v5.onnx')
}

/** Thrown when the model cannot be loaded or run; `code` is stable. */
export class VadModelError extends Error {
  readonly code = 'vad_model_failed'
  constructor(message: string, options?: { cause?: unknown }) {
    super(message, options)
    this.name = 'VadModelError'
  }
}

/** Result of one batched inference; arrays are owned by the caller after return. */
export interface SileroOutput {
  /** Speech probability per row, length n. */
  probs: Float32Array
  /** New state in the model's [2, n, 128] layout. */
  state: Float32Array
}

/** A loaded model: the runtime module with the session, so `infer` needs a single await. */
interface LoadedSession {
  ort: typeof Ort
  session: Ort.InferenceSession
}

/** How a SileroModel is built. */
export interface SileroModelOptions {
  /** Default: the model shipped by @ricky0123/vad-web. */
  modelPath?: string
  /**
   * Run the model with its convolutions rewritten as one matrix product over the batch (conv-as-matmul.ts): the
   * same probabilities, less than half the CPU a frame in calls of 32 frames or more (a fifth more for a lone
   * frame). Default true; false runs the file as shipped (the benchmark compares the two). If the rewritten model
   * does not load, the file runs as shipped and `foldedConvs` stays 0 (the start-up log shows it).
   */
  foldBatch?: boolean
}

/**
 * Silero VAD v5 on onnxruntime-node: one lazily created session (1 intra-op, 1 inter-op thread); all
 * recurrent state is passed in per call, so one instance serves every stream in the process. onnxruntime-node itself
 * is imported with the session, not with this module: its native library is not needed to start the gateway.
 */
export class SileroModel {
  readonly #modelPath: string
  readonly #foldBatch: boolean
  #session: Promise<LoadedSession> | undefined
  #closed = false
  #foldedConvs = 0
  readonly #srTensors = new Map<number, Ort.Tensor>()

  constructor(options: SileroModelOptions = {}) {
    this.#modelPath = options.modelPath ?? defaultSileroModelPath()
    this.#foldBatch = options.foldBatch ?? true
  }

  /** Convolutions the loaded session runs as batch-wide matrix products (0 before loading, or as shipped). */
  get foldedConvs(): number {
    return this.#foldedConvs
  }

  /** Load the session now (otherwise the first inference does). Safe to call repeatedly. */
  async load(options: { signal?: AbortSignal } = {}): Promise<void> {
    options.signal?.throwIfAborted()
    await this.#sessionPromise()
  }

  /**
   * Run `n` frames in one call. `input` holds n rows of (context + frame) samples at `sampleRate`;
   * `state` is [2, n, 128].
   */
  async infer(
    sampleRate: SileroSampleRate,
    n: number,
    input: Float32Array,
    state: Float32Array,
    options: { signal?: AbortSignal } = {},
  ): Promise<SileroOutput> {
    options.signal?.throwIfAborted()
    const { ort, session } = await this.#sessionPromise()
    const width = sileroFrameSamples(sampleRate) + sileroContextSamples(sampleRate)
    if (input.length !== n * width) throw new RangeError(`input must hold ${n} x ${width} samples, got ${input.length}`)
    if (state.length !== n * SILERO_STATE_SIZE) throw new RangeError(`state must hold ${n * SILERO_STATE_SIZE} floats`)
    let sr = this.#srTensors.get(sampleRate)
    if (sr === undefined) {
      sr = new ort.Tensor('int64', BigInt64Array.from([BigInt(sampleRate)]), [])
      this.#srTensors.set(sampleRate, sr)
    }
    let out: Ort.InferenceSession.OnnxValueMapType
    try {
      out = await session.run({
        input: new ort.Tensor('float32', input, [n, width]),
        state: new ort.Tensor('float32', state, [2, n, 128]),
        sr,
      })
    } catch (err) {
      throw new VadModelError('Silero inference failed', { cause: err })
    }
    const probs = out.output?.data
    const next = out.stateN?.data
    if (!(probs instanceof Float32Array) || !(next instanceof Float32Array) || probs.length < n) {
      throw new VadModelError('Silero returned unexpected outputs')
    }
    return { probs, state: next }
  }

  /** Release the session. Idempotent. */
  async close(): Promise<void> {
    if (this.#closed) return
    this.#closed = true
    const s = this.#session
    this.#session = undefined
    if (s !== undefined) await (await s.catch(() => undefined))?.session.release()
  }

  #sessionPromise(): Promise<LoadedSession> {
    if (this.#closed) return Promise.reject(new VadModelError('Silero model is closed'))
    this.#session ??= Promise.all([import('onnxruntime-node'), readFile(this.#modelPath)])
      .then(async ([ort, shipped]) => {
        const options: Ort.InferenceSession.SessionOptions = {
          intraOpNumThreads: 1,
          interOpNumThreads: 1,
          executionMode: 'sequential',
          graphOptimizationLevel: 'all',
        }
        const bytes = new Uint8Array(shipped.buffer, shipped.byteOffset, shipped.byteLength)
        const folded = this.#foldBatch ? foldBatchIntoConvs(bytes) : { model: bytes, convs: 0 }
        if (folded.convs > 0) {
          try {
            const session = await ort.InferenceSession.create(folded.model, options)
            this.#foldedConvs = folded.convs
            return { ort, session }
          } catch {
            // A model this rewrite does not suit (another file given by modelPath): run it as shipped.
          }
        }
        return { ort, session: await ort.InferenceSession.create(bytes, options) }
      })
      .catch((err: unknown) => {
        this.#session = undefined
        throw new VadModelError(`cannot load Silero model from ${this.#modelPath}`, { cause: err })
      })
    return this.#session
  }
}

let shared: SileroModel | undefined

/** The process-wide model instance (created on first use, session loaded on first inference). */
export function sharedSileroModel(): SileroModel {
  shared ??= new SileroModel()
  return shared
}
