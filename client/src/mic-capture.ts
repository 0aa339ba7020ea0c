import { Downsampler } from './downsampler.js'
import { floatToInt16, rms } from './pcm16.js'

/** Samples per `client.audio` message: 100 ms at 8 kHz. */
export const MIC_CHUNK_SAMPLES = 800

// Runs in the AudioWorkletGlobalScope: it only batches the 128-sample render quanta and posts them to the page,
// where filtering and encoding happen (testable code, and the audio thread stays light).
const WORKLET_SOURCE = `
class VoxgateCapture extends AudioWorkletProcessor {
  constructor() { super(); this.buffer = new Float32Array(1024); this.length = 0; }
  process(inputs) {
    const channel = inputs[0] && inputs[0][0];
    if (channel) {
      for (let i = 0; i < channel.length; i++) {
        this.buffer[this.length++] = channel[i];
        if (this.length === this.buffer.length) {
          this.port.postMessage(this.buffer, [this.buffer.buffer]);
          this.buffer = new Float32Array(1024);
          this.length = 0;
        }
      }
    }
    return true;
  }
}
registerProcessor('voxgate-capture', VoxgateCapture);
`

/** Receives 100 ms chunks of 8 kHz PCM16 and the microphone level. */
export interface MicCaptureHandlers {
  onChunk(samples: Int16Array): void
  /** RMS of the last chunk, 0..1. */
  onLevel(level: number): void
}

/**
 * Microphone capture: getUserMedia -> AudioWorklet (inline module from a Blob URL) at the AudioContext rate ->
 * {@link Downsampler} to 8 kHz -> PCM16 chunks of 100 ms. Echo cancellation stays on so the agent's voice from the
 * speakers is not sent back.
 */
export class MicCapture {
  readonly #context: AudioContext
  readonly #handlers: MicCaptureHandlers
  #stream: MediaStream | undefined
  #source: MediaStreamAudioSourceNode | undefined
  #node: AudioWorkletNode | undefined
  #downsampler: Downsampler
  #pending: Float32Array[] = []
  #pendingLength = 0

  constructor(context: AudioContext, handlers: MicCaptureHandlers) {
    this.#context = context
    this.#handlers = handlers
    this.#downsampler = new Downsampler(context.sampleRate, 8000)
  }

  /** Ask for the microphone and start capturing; rejects when access is denied or unavailable. */
  async start(constraints: MediaTrackConstraints = {}): Promise<void> {
    if (this.#node) return
    const url = URL.createObjectURL(new Blob([WORKLET_SOURCE], { type: 'text/javascript' }))
    try {
      await this.#context.audioWorklet.addModule(url)
    } finally {
      URL.revokeObjectURL(url)
    }
    this.#stream = await navigator.mediaDevices.getUserMedia({
      audio: { channelCount: 1, echoCancellation: true, noiseSuppression: true, autoGainControl: true, ...constraints },
    })
    this.#source = this.#context.createMediaStreamSource(this.#stream)
    this.#node = new AudioWorkletNode(this.#context, 'voxgate-capture', { numberOfInputs: 1, numberOfOutputs: 0 })
    this.#node.port.onmessage = (event: MessageEvent<Float32Array>) => this.#onBlock(event.data)
    this.#source.connect(this.#node)
  }

  /** Drop audio buffered for the next chunk (start of a push-to-talk turn). */
  reset(): void {
    this.#downsampler.reset()
    this.#pending = []
    this.#pendingLength = 0
  }

  /** Send what is buffered now, even if shorter than 100 ms (end of a push-to-talk turn). */
  flush(): void {
    if (this.#pendingLength > 0) this.#emit(this.#take(this.#pendingLength))
  }

  /** Release the microphone. Idempotent. */
  stop(): void {
    this.#source?.disconnect()
    if (this.#node) this.#node.port.onmessage = null
    this.#node?.disconnect()
    for (const track of this.#stream?.getTracks() ?? []) track.stop()
    this.#source = undefined
    this.#node = undefined
    this.#stream = undefined
    this.reset()
  }

  #onBlock(block: Float32Array): void {
    const out = this.#downsampler.process(block)
    if (out.length === 0) return
    this.#pending.push(out)
    this.#pendingLength += out.length
    while (this.#pendingLength >= MIC_CHUNK_SAMPLES) this.#emit(this.#take(MIC_CHUNK_SAMPLES))
  }

  #take(count: number): Float32Array {
    const chunk = new Float32Array(count)
    let filled = 0
    while (filled < count) {
      const head = this.#pending[0]!
      const n = Math.min(head.length, count - filled)
      chunk.set(head.subarray(0, n), filled)
      filled += n
      if (n === head.length) this.#pending.shift()
      else this.#pending[0] = head.subarray(n)
    }
    this.#pendingLength -= count
    return chunk
  }

  #emit(chunk: Float32Array): void {
    this.#handlers.onLevel(Math.min(1, rms(chunk)))
    this.#handlers.onChunk(floatToInt16(chunk))
  }
}
