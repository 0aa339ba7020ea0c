import t from 'tap'
import { LATENCY_STAGES, latencyBreakdown } from '../../pipeline/latency/latency-breakdown.js'

t.test('stages are relative to the end of user speech, in order, and their durations add up to the last', async (t) => {
  const b = latencyBreakdown({
    user_speech_end: 1000.4,
    transcript_final: 1200.2,
    webhook_sent: 1201.7,
    reply_first_byte: 1450.5,
    reply_first_text: 1451,
    tts_request: 1451,
    tts_first_audio: 1600.6,
    first_frame_out: 1601,
    first_audio_heard: 1720.9,
  })
  t.same(
    b?.stages.map((s) => s.name),
    LATENCY_STAGES,
  )
  t.same(
    b?.stages.map((s) => s.at_ms),
    [0, 200, 201, 450, 451, 451, 600, 601, 721],
  )
  t.equal(
    b?.stages.reduce((n, s) => n + s.duration_ms, 0),
    721,
    'durations add up to the last offset',
  )
})

t.test('stages not reached are left out; the total ends at the furthest output stage', async (t) => {
  const b = latencyBreakdown({ user_speech_end: 10, transcript_final: 20, webhook_sent: 25, reply_first_text: 90 })
  t.same(b, {
    stages: [
      { name: 'user_speech_end', at_ms: 0, duration_ms: 0 },
      { name: 'transcript_final', at_ms: 10, duration_ms: 10 },
      { name: 'webhook_sent', at_ms: 15, duration_ms: 5 },
      { name: 'reply_first_text', at_ms: 80, duration_ms: 65 },
    ],
  })
})

t.test('no breakdown without an origin or without any output', async (t) => {
  t.equal(latencyBreakdown({ reply_first_text: 5, tts_first_audio: 9 }), null, 'a welcome turn has no end of user speech')
  t.equal(latencyBreakdown({ user_speech_end: 1, transcript_final: 2, webhook_sent: 3 }), null, 'cut off before any reply')
})
