import t from 'tap'
import { decodeMulaw, encodeMulaw } from '../../pipeline/audio/g711-mulaw.js'
import { CallerAudio, type VadFactory } from '../../pipeline/voice/caller-audio.js'
import type { SttStream } from '../../pipeline/vendors/stt/stt-stream.js'
import { vadSchema } from '../../pipeline/config/vad-schema.js'
import { silentLogger } from '../../pipeline/runtime/logger.js'

/** An STT that only counts what it is sent. */
function countingStt(): SttStream & { bytes: number } {
  const stt = {
    bytes: 0,
    closed: false,
    pushAudio(chunk: Buffer) {
      stt.bytes += chunk.length
    },
    finalize() {},
    async close() {},
    async *[Symbol.asyncIterator]() {},
  }
  return stt
}

/** A VAD gate that lets audio through from caller sample `from` on (speech started there). */
function gateFrom(from: number): VadFactory {
  return (onEvent, { gateAudio }) => {
    let seen = 0
    return {
      push(samples) {
        const start = seen
        seen += samples.length
        // As the real VAD: gated audio only when asked to gate.
        if (gateAudio && seen > from) {
          const skip = Math.max(0, from - start)
          onEvent({ type: 'audio', samples: samples.subarray(skip), startSample: start + skip })
        }
      },
      close() {},
    }
  }
}

function callerAudio<S extends SttStream>(stt: S, createVad: VadFactory, options: { ungated?: boolean } = {}) {
  const caller = new CallerAudio({
    format: 'ulaw_8000',
    vad: vadSchema.parse({ gate_audio: options.ungated !== true }),
    useVad: true,
    stt,
    createVad,
    logger: silentLogger,
    sendToStt: () => undefined,
    onSpeechStart: () => undefined,
    onSpeechEnd: () => undefined,
    onMisfire: () => undefined,
  })
  return { caller, stt }
}

t.test('with VAD gating, STT times are moved to where the caller said the words', async (t) => {
  const { caller, stt } = callerAudio(countingStt(), gateFrom(4000))
  for (let i = 0; i < 100; i++) caller.push(Buffer.alloc(160, 0x7f))
  t.equal(stt.bytes, 12_000, 'the first half second never reached STT')
  t.same(caller.callerWords([{ word: 'four', start: 0.1, end: 0.25 }]), [{ word: 'four', start: 0.6, end: 0.75 }])
})

t.test('ungated, the clocks are the same', async (t) => {
  const { caller } = callerAudio(countingStt(), gateFrom(0), { ungated: true })
  for (let i = 0; i < 50; i++) caller.push(Buffer.alloc(160, 0x7f))
  t.same(caller.callerWords([{ word: 'one', start: 0.3, end: 0.4 }]), [{ word: 'one', start: 0.3, end: 0.4 }])
})

/** An STT that keeps what it is sent. */
function recordingStt(): SttStream & { sent: Buffer[] } {
  const stt = {
    sent: [] as Buffer[],
    closed: false,
    pushAudio(chunk: Buffer) {
      stt.sent.push(Buffer.from(chunk))
    },
    finalize() {},
    async close() {},
    async *[Symbol.asyncIterator]() {},
  }
  return stt
}

/** `count` chunks of 160 mu-law bytes running through every byte value (0x7f and 0xff both decode to 0). */
function wireChunks(count: number): Buffer[] {
  return Array.from({ length: count }, (_, c) => Buffer.from(Array.from({ length: 160 }, (_, i) => (c * 160 + i * 7) & 0xff)))
}

t.test('gated mu-law audio reaches STT as the caller sent it, across the ring it is kept in', async (t) => {
  const { caller, stt } = callerAudio(recordingStt(), gateFrom(4000))
  // 300 chunks: 48,000 samples, more than the 32,768 kept, so the ring wraps.
  const chunks = wireChunks(300)
  for (const c of chunks) caller.push(c)
  const sent = Buffer.concat(stt.sent)
  const pushed = Buffer.concat(chunks)
  t.equal(sent.length, pushed.length - 4000)
  t.ok(sent.equals(pushed.subarray(4000)), 'byte for byte, 0x7f included (decoded and encoded again it would be 0xff)')
  t.ok(sent.includes(0x7f))
})

t.test('audio handed back from before what is kept is encoded from the VAD samples instead', async (t) => {
  // A VAD that answers late: after 40,000 samples it hands back the first 1,000 (older than the ring).
  const late: VadFactory = (onEvent) => {
    const heard: Int16Array[] = []
    let seen = 0
    return {
      push(samples) {
        heard.push(samples.slice())
        seen += samples.length
        if (seen === 40_000) {
          const all = new Int16Array(seen)
          let o = 0
          for (const h of heard) {
            all.set(h, o)
            o += h.length
          }
          onEvent({ type: 'audio', samples: all.subarray(0, 1000), startSample: 0 })
          onEvent({ type: 'audio', samples: all.subarray(39_000, 40_000), startSample: 39_000 })
        }
      },
      close() {},
    }
  }
  const { caller, stt } = callerAudio(recordingStt(), late)
  const chunks = wireChunks(250)
  for (const c of chunks) caller.push(c)
  const pushed = Buffer.concat(chunks)
  t.equal(stt.sent.length, 2)
  const [old, recent] = stt.sent as [Buffer, Buffer]
  t.ok(Buffer.from(encodeMulaw(decodeMulaw(pushed.subarray(0, 1000)))).equals(old), 'the old audio: encoded again')
  t.notOk(old.equals(pushed.subarray(0, 1000)), '(which differs from the wire where it carried 0x7f)')
  t.ok(recent.equals(pushed.subarray(39_000, 40_000)), 'the recent audio: the wire bytes')
})
