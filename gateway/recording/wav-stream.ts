/**
 * A stored recording as WAV bytes, produced block by block from its chunks, so a download never holds the whole
 * file: stereo (caller left, agent right) or a mono mixdown, any byte range of it.
 */
import type { Kysely } from 'kysely'
import type { Database } from '../store/schema.js'
import { AGENT_CHANNEL, CALLER_CHANNEL, readRecordingChunks, type RecordingChunk } from '../store/recording-chunks.js'
import { decodeMulaw, wavHeader } from '../../pipeline/index.js'

const HEADER_BYTES = 44
/** Samples per channel read from the store at a time (2 s at 16 kHz). */
const BLOCK_SAMPLES = 32_000

/** Shape of the file a recording is served as. */
export interface WavFile {
  sessionId: string
  sampleRate: number
  totalSamples: number
  channels: 1 | 2
}

/** Size in bytes of the WAV file. */
export function wavSize(f: WavFile): number {
  return HEADER_BYTES + f.totalSamples * f.channels * 2
}

/** Bytes [start, end] (inclusive) of the WAV file, as a sequence of buffers read from the store as they are needed. */
export async function* wavBytes(
  db: Kysely<Database>,
  f: WavFile,
  start: number,
  end: number,
  signal?: AbortSignal,
): AsyncGenerator<Buffer> {
  const frame = f.channels * 2
  if (start < HEADER_BYTES) {
    yield wavHeader(f.totalSamples * frame, f.sampleRate, f.channels).subarray(start, Math.min(HEADER_BYTES, end + 1))
  }
  const dataStart = Math.max(0, start - HEADER_BYTES)
  const dataEnd = end + 1 - HEADER_BYTES
  if (dataEnd <= dataStart) return
  const firstSample = Math.floor(dataStart / frame)
  const lastSample = Math.ceil(dataEnd / frame)
  for (let a = firstSample; a < lastSample; a += BLOCK_SAMPLES) {
    signal?.throwIfAborted()
    const b = Math.min(lastSample, a + BLOCK_SAMPLES)
    const left = paint(await readRecordingChunks(db, f.sessionId, CALLER_CHANNEL, a, b), a, b)
    const right = paint(await readRecordingChunks(db, f.sessionId, AGENT_CHANNEL, a, b), a, b)
    const out = Buffer.allocUnsafe((b - a) * frame)
    for (let i = 0; i < b - a; i++) {
      const l = left[i] as number
      const r = right[i] as number
      if (f.channels === 2) {
        out.writeInt16LE(l, i * 4)
        out.writeInt16LE(r, i * 4 + 2)
      } else {
        out.writeInt16LE(Math.max(-32768, Math.min(32767, l + r)), i * 2)
      }
    }
    const from = Math.max(0, dataStart - a * frame)
    const to = Math.min(out.length, dataEnd - a * frame)
    yield out.subarray(from, to)
  }
}

/** Samples [a, b) of one channel: the chunks in write order, later ones over earlier ones; null chunks are silence. */
function paint(chunks: RecordingChunk[], a: number, b: number): Int16Array {
  const out = new Int16Array(b - a)
  for (const c of chunks) {
    const from = Math.max(a, c.startSample)
    const to = Math.min(b, c.startSample + c.sampleCount)
    if (to <= from) continue
    if (c.pcm === null) {
      out.fill(0, from - a, to - a)
      continue
    }
    if (c.pcm.length === c.sampleCount) {
      // A mu-law chunk (one byte a sample; PCM16 has two): see ChunkRecorderOptions.mulaw.
      decodeMulaw(c.pcm.subarray(from - c.startSample, to - c.startSample), out.subarray(from - a, to - a))
      continue
    }
    const view = Buffer.from(c.pcm.buffer, c.pcm.byteOffset, c.pcm.byteLength)
    for (let s = from; s < to; s++) out[s - a] = view.readInt16LE((s - c.startSample) * 2)
  }
  return out
}
