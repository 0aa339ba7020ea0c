import { bufferToInt16, decodeMulaw, type InputAudioFormat, type OutputAudioFormat, Resampler } from '../../pipeline/index.js'

/** PCM16 at `rate` from a wire format (a copy: the agent's playout keeps what it is given). */
export function decoder(format: InputAudioFormat | OutputAudioFormat, rate: number): (chunk: Buffer) => Int16Array {
  switch (format) {
    case 'ulaw_8000':
      return (chunk) => decodeMulaw(chunk)
    case 'pcm_16000':
      return (chunk) => Int16Array.from(bufferToInt16(chunk.length % 2 === 0 ? chunk : chunk.subarray(0, chunk.length - 1)))
    case 'pcm_8000': {
      if (rate === 8000)
        return (chunk) => Int16Array.from(bufferToInt16(chunk.length % 2 === 0 ? chunk : chunk.subarray(0, chunk.length - 1)))
      const resampler = new Resampler({ from: 8000, to: rate })
      return (chunk) =>
        Int16Array.from(resampler.processInt16(bufferToInt16(chunk.length % 2 === 0 ? chunk : chunk.subarray(0, chunk.length - 1))))
    }
  }
}
