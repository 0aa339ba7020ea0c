import {
  SILERO_STATE_SIZE,
  sharedSileroModel,
  sileroContextSamples,
  sileroFrameSamples,
  type SileroModel,
  type SileroSampleRate,
} from './silero-model.js'

/**
 * One frame of one stream waiting for inference. The batcher reads `input` and `state` when the batch runs,
 * writes the new state back into `state` and calls `done`; the owner must not touch either array meanwhile.
 */
export interface VadJob {
  /** Model rate of `input`. */
  sampleRate: SileroSampleRate
  /** Context + frame samples (288 at 8 kHz, 576 at 16 kHz). */
  input: Float32Array
  /** The stream's recurrent state, [2][128], updated in place. */
  state: Float32Array
  /** Views of `state`'s two halves, made once by the owner, so a frame's copy into the batch makes no views. */
  stateHalves?: readonly [Float32Array, Float32Array]
  /** Called once with the speech probability, or with an error. */
  done(error: Error | undefined, probability: number): void
  /**
   * More frames of the same stream wait behind this one: it is late already (a stream runs one frame at a time), so
   * its batch runs without waiting for company. Without this, a stream behind by k frames (audio read late after a
   * stall) drained at one frame per `maxWaitMs` at best, and on a starved event loop fell further behind.
   */
  behind?: boolean
}

/** Batching knobs. */
export interface VadBatcherOptions {
  /**
   * Most frames in one model call. Default 128: a batch runs synchronously (~4 ms at 8 kHz when full), and larger
   * calls cost less a frame: in the gateway at 200 recorded calls (bench carrier-calls) the model took 47 us a frame
   * in calls of 32, 41 us in calls of ~65; at 300 calls a cap of 32 left 20-30% of the frames unrun.
   */
  maxBatch?: number
  /**
   * How long the first frame of an idle batcher waits for company; 0 = until the end of this I/O phase. Default 8
   * (a quarter of a frame): every model call returns its outputs in buffers that V8 tracks with weak handles and
   * frees through a callback each after a full GC, so fewer, larger calls shorten the pause and the burst after it
   * (measured at 100 calls: 445 calls/s of 7 frames at 2 ms, 150 of 20 at 8 ms; see bench/soak).
   */
  maxWaitMs?: number
}

/** Counters for monitoring and benchmarks. */
export interface VadBatcherStats {
  batches: number
  frames: number
  maxBatchSeen: number
}

/** Hears about the batcher's work as it happens (metrics); methods must be cheap and never throw. */
export interface VadObserver {
  /** A model call ran `size` frames. */
  batch(size: number): void
  /** A stream skipped `frames` frames as silence, without inference, because the model fell behind. */
  skipped(frames: number): void
}

/** Most observers one batcher keeps (one per gateway process in practice; a bound all the same). */
const MAX_OBSERVERS = 8

interface RateBuffers {
  input: Float32Array
  state: Float32Array
}

/**
 * Collects frames from many streams that arrive close together and runs them as one model call with batch
 * dimension N, scattering probabilities and states back. One model call is in flight at a time; frames
 * arriving during it form the next batch, so batches grow with load.
 */
export class VadBatcher {
  readonly maxBatch: number
  readonly maxWaitMs: number
  readonly #model: SileroModel
  readonly #pending: VadJob[] = []
  readonly #buffers = new Map<SileroSampleRate, RateBuffers>()
  #timer: NodeJS.Timeout | NodeJS.Immediate | undefined
  /** When #timer fires (performance.now()). */
  #timerAt = Number.NaN
  /** When the oldest frame still pending arrived (performance.now()); NaN while none is. */
  #oldestAt = Number.NaN
  #running = false
  #closed = false
  readonly #counters: VadBatcherStats = { batches: 0, frames: 0, maxBatchSeen: 0 }
  readonly #observers = new Set<VadObserver>()

  constructor(model: SileroModel = sharedSileroModel(), options: VadBatcherOptions = {}) {
    this.#model = model
    this.maxBatch = Math.max(1, Math.floor(options.maxBatch ?? 128))
    this.maxWaitMs = Math.max(0, options.maxWaitMs ?? 8)
  }

  /** Batches and frames run so far. */
  get stats(): Readonly<VadBatcherStats> {
    return this.#counters
  }

  /** Adds an observer; returns the function that removes it. Throws past MAX_OBSERVERS. */
  observe(observer: VadObserver): () => void {
    if (this.#observers.size >= MAX_OBSERVERS) throw new Error(`VadBatcher: at most ${MAX_OBSERVERS} observers`)
    this.#observers.add(observer)
    return () => this.#observers.delete(observer)
  }

  /** A stream using this batcher skipped `frames` frames without inference (tells the observers). */
  noteSkipped(frames: number): void {
    for (const o of this.#observers) o.skipped(frames)
  }

  /** Queue one frame; `job.done` is called when its batch has run. */
  submit(job: VadJob): void {
    if (this.#closed) {
      job.done(new Error('VadBatcher is closed'), 0)
      return
    }
    if (this.#pending.push(job) === 1) this.#oldestAt = performance.now()
    if (this.#running) return
    if (this.#pending.length >= this.maxBatch) this.#flushNow()
    else this.#runBy(job.behind === true ? 0 : this.#oldestAt + this.maxWaitMs - performance.now())
  }

  /** Promise form of `submit` for one frame (allocates; streams use `submit`). */
  infer(sampleRate: SileroSampleRate, input: Float32Array, state: Float32Array, options: { signal?: AbortSignal } = {}): Promise<number> {
    options.signal?.throwIfAborted()
    return new Promise((resolve, reject) => {
      this.submit({ sampleRate, input, state, done: (err, p) => (err === undefined ? resolve(p) : reject(err)) })
    })
  }

  /** Fail queued frames and refuse new ones. Idempotent; does not close the shared model. */
  close(): void {
    if (this.#closed) return
    this.#closed = true
    this.#clearTimer()
    const jobs = this.#pending.splice(0)
    for (const j of jobs) j.done(new Error('VadBatcher is closed'), 0)
  }

  readonly #onTimer = (): void => {
    this.#timer = undefined
    if (!this.#running) this.#flushNow()
  }

  /** The pending frames run within `ms` (0: at the end of this I/O phase); an earlier timer already set stays. */
  #runBy(ms: number): void {
    const at = performance.now() + Math.max(0, ms)
    if (this.#timer !== undefined) {
      if (this.#timerAt <= at) return
      this.#clearTimer()
    }
    this.#timerAt = at
    this.#timer = ms <= 0 ? setImmediate(this.#onTimer) : setTimeout(this.#onTimer, ms)
  }

  /**
   * After a model call: a full batch, or frames left over from one (they have waited already), run at once; a
   * partial batch waits for company until its oldest frame has waited `maxWaitMs`, unless a frame in it is behind
   * (see VadJob). Flushing every partial batch at once would run one model call per turn of the event loop under
   * load, each a few frames (~49 us a frame at 4 against ~34 at 32).
   */
  #afterRun(leftOver: boolean): void {
    if (this.#pending.length === 0 || this.#closed) return
    if (leftOver || this.#pending.length >= this.maxBatch) {
      this.#flushNow()
      return
    }
    this.#runBy(this.#pending.some((j) => j.behind === true) ? 0 : this.#oldestAt + this.maxWaitMs - performance.now())
  }

  #clearTimer(): void {
    if (this.#timer === undefined) return
    clearTimeout(this.#timer as NodeJS.Timeout)
    clearImmediate(this.#timer as NodeJS.Immediate)
    this.#timer = undefined
  }

  #flushNow(): void {
    this.#clearTimer()
    if (this.#pending.length === 0 || this.#closed) return
    // One model call serves one sample rate; take the leading run of jobs at the head's rate.
    const rate = this.#pending[0]!.sampleRate
    let n = 0
    const jobs: VadJob[] = []
    for (let i = 0; i < this.#pending.length && n < this.maxBatch; i++) {
      const j = this.#pending[i]!
      if (j.sampleRate !== rate) continue
      jobs.push(j)
      n++
    }
    const leftOver = n !== this.#pending.length
    if (!leftOver) this.#pending.length = 0
    else {
      const taken = new Set(jobs)
      const rest = this.#pending.filter((j) => !taken.has(j))
      this.#pending.length = 0
      this.#pending.push(...rest)
    }
    this.#oldestAt = Number.NaN
    this.#running = true
    void this.#runBatch(rate, jobs).finally(() => {
      this.#running = false
      this.#afterRun(leftOver)
    })
  }

  async #runBatch(rate: SileroSampleRate, jobs: VadJob[]): Promise<void> {
    const n = jobs.length
    const width = sileroFrameSamples(rate) + sileroContextSamples(rate)
    let buf = this.#buffers.get(rate)
    if (buf === undefined || buf.input.length < n * width) {
      buf = { input: new Float32Array(this.maxBatch * width), state: new Float32Array(this.maxBatch * SILERO_STATE_SIZE) }
      this.#buffers.set(rate, buf)
    }
    const half = SILERO_STATE_SIZE / 2
    const bufState = buf.state
    for (let i = 0; i < n; i++) {
      const j = jobs[i]!
      buf.input.set(j.input, i * width)
      // Per-stream state is [2][128]; the model wants [2][n][128]. Copied with set() from the stream's own views of
      // its halves: native copies, and no view made per frame (views were 5% of what the gateway allocated).
      const halves = j.stateHalves
      if (halves !== undefined) {
        bufState.set(halves[0], i * half)
        bufState.set(halves[1], (n + i) * half)
      } else {
        bufState.set(j.state.subarray(0, half), i * half)
        bufState.set(j.state.subarray(half, 2 * half), (n + i) * half)
      }
    }
    let probs: Float32Array
    let state: Float32Array
    try {
      ;({ probs, state } = await this.#model.infer(rate, n, buf.input.subarray(0, n * width), buf.state.subarray(0, n * SILERO_STATE_SIZE)))
    } catch (err) {
      const e = err instanceof Error ? err : new Error(String(err))
      for (const j of jobs) j.done(e, 0)
      return
    }
    this.#counters.batches++
    this.#counters.frames += n
    if (n > this.#counters.maxBatchSeen) this.#counters.maxBatchSeen = n
    for (const o of this.#observers) o.batch(n)
    // Back out with index loops: the model's output is a new array each call, so set() would need two new views a
    // frame (objects the collector must clear); a loop over 256 floats is ~0.3 us.
    for (let i = 0; i < n; i++) {
      const s = jobs[i]!.state
      for (let x = 0, a = i * half, b = (n + i) * half; x < half; x++) {
        s[x] = state[a + x]!
        s[half + x] = state[b + x]!
      }
    }
    // A throwing listener must not starve the other streams of their results: deliver all, then rethrow.
    let failure: unknown
    for (let i = 0; i < n; i++) {
      try {
        jobs[i]!.done(undefined, probs[i]!)
      } catch (err) {
        failure ??= err
      }
    }
    if (failure !== undefined) throw failure
  }
}

let shared: VadBatcher | undefined

/** The process-wide batcher over the shared model. */
export function sharedVadBatcher(): VadBatcher {
  shared ??= new VadBatcher()
  return shared
}

/** Observes the process-wide batcher (every call's VAD by default); returns the function that stops it. */
export function observeSharedVad(observer: VadObserver): () => void {
  return sharedVadBatcher().observe(observer)
}
