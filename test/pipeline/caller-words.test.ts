import t from 'tap'
import { CallerAudio, type VadFactory } from '../../pipeline/voice/caller-audio.js'
import type { SttStream } from '../../pipeline/stt/stt-stream.js'
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

function callerAudio(options: { gateFrom?: number; ungated?: boolean }) {
  const stt = countingStt()
  const caller = new CallerAudio({
    format: 'ulaw_8000',
    vad: vadSchema.parse({ gate_audio: options.ungated !== true }),
    useVad: true,
    stt,
    createVad: gateFrom(options.gateFrom ?? 0),
    logger: silentLogger,
    sendToStt: () => undefined,
    onSpeechStart: () => undefined,
    onSpeechEnd: () => undefined,
    onMisfire: () => undefined,
  })
  return { caller, stt }
}

t.test('with VAD gating, STT times are moved to where the caller said the words', async (t) => {
  const { caller, stt } = callerAudio({ gateFrom: 4000 })
  for (let i = 0; i < 100; i++) caller.push(Buffer.alloc(160, 0x7f))
  t.equal(stt.bytes, 12_000, 'the first half second never reached STT')
  t.same(caller.callerWords([{ word: 'four', start: 0.1, end: 0.25 }]), [{ word: 'four', start: 0.6, end: 0.75 }])
})

t.test('ungated, the clocks are the same', async (t) => {
  const { caller } = callerAudio({ ungated: true })
  for (let i = 0; i < 50; i++) caller.push(Buffer.alloc(160, 0x7f))
  t.same(caller.callerWords([{ word: 'one', start: 0.3, end: 0.4 }]), [{ word: 'one', start: 0.3, end: 0.4 }])
})
