import { readFileSync } from 'node:fs'
import t from 'tap'
import type { CarrierInbound } from '../../carrier/carrier-stream-events.js'
import { MAX_FRAME_BYTES, TwilioMediaCodec } from '../../carrier/twilio/media-codec.js'

const fixture = <T>(name: string): T => JSON.parse(readFileSync(new URL(`../fixtures/carrier/${name}`, import.meta.url), 'utf8')) as T

const call = fixture<Record<string, unknown>[]>('media-stream-call.json')
const malformed = fixture<{ name: string; raw: string; reason: string }[]>('malformed-frames.json')
const SID = 'MZ18ad3ab5a668481ce02b83e7395059f0'

t.test('decodes a recorded call, frame by frame', async (t) => {
  const codec = new TwilioMediaCodec()
  const events = call.map((frame) => codec.decode(JSON.stringify(frame)))
  t.same(
    events.map((e) => e?.kind),
    ['connected', 'start', 'media', 'media', 'dtmf', 'mark', 'media', 'stop'],
  )
  t.same(events[0], { kind: 'connected', protocol: 'Call', version: '1.0.0' })
  t.same(events[1], {
    kind: 'start',
    sequenceNumber: 1,
    streamSid: SID,
    callSid: 'CA3f1e2d4c6b8a0f9e7d5c3b1a2f4e6d8c',
    accountSid: 'AC0b5d7c1f9e3a4b6c8d0e2f4a6b8c0d2e',
    tracks: ['inbound'],
    customParameters: { agent: 'agt_123', direction: 'inbound' },
    mediaFormat: { encoding: 'audio/x-mulaw', sampleRate: 8000, channels: 1 },
  })
  const media = events[2] as Extract<CarrierInbound, { kind: 'media' }>
  t.equal(media.sequenceNumber, 2)
  t.equal(media.chunk, 1)
  t.equal(media.timestamp, 5)
  t.equal(media.track, 'inbound')
  t.equal(media.streamSid, SID)
  t.ok(Buffer.isBuffer(media.payload))
  t.equal(media.payload.length, 160, '20 ms of mu-law')
  const wire = (call[2] as { media: { payload: string } }).media.payload
  t.same(media.payload, Buffer.from(wire, 'base64'))
  t.same(events[4], { kind: 'dtmf', sequenceNumber: 4, streamSid: SID, digit: '5', track: 'inbound_track' })
  t.same(events[5], { kind: 'mark', sequenceNumber: 5, streamSid: SID, name: 'turn-1:chunk-3' })
  t.same(events[7], {
    kind: 'stop',
    sequenceNumber: 7,
    streamSid: SID,
    callSid: 'CA3f1e2d4c6b8a0f9e7d5c3b1a2f4e6d8c',
    accountSid: 'AC0b5d7c1f9e3a4b6c8d0e2f4a6b8c0d2e',
  })
})

t.test('malformed frames are returned as invalid, never thrown', async (t) => {
  const codec = new TwilioMediaCodec()
  for (const c of malformed) {
    let out: CarrierInbound | null = null
    t.doesNotThrow(() => {
      out = codec.decode(c.raw)
    }, c.name)
    t.match(out, { kind: 'invalid', reason: c.reason, detail: String }, c.name)
  }
})

t.test('oversized frames are rejected before parsing', async (t) => {
  const codec = new TwilioMediaCodec()
  const payload = 'A'.repeat(MAX_FRAME_BYTES)
  const big = JSON.stringify({ event: 'media', streamSid: SID, media: { payload } })
  t.match(codec.decode(big), { kind: 'invalid', reason: 'too_large' })
  // Short in UTF-16 units but over the limit in bytes.
  const wide = JSON.stringify({ event: 'mark', streamSid: SID, mark: { name: '\u20ac'.repeat(22_000) } })
  t.ok(wide.length < MAX_FRAME_BYTES)
  t.match(codec.decode(wide), { kind: 'invalid', reason: 'too_large' })
  const fine = JSON.stringify({ event: 'mark', streamSid: SID, sequenceNumber: '3', mark: { name: 'x'.repeat(1000) } })
  t.match(codec.decode(fine), { kind: 'mark' })
})

t.test('tolerant of numbers sent as numbers, and of other tracks', async (t) => {
  const codec = new TwilioMediaCodec()
  const numeric = JSON.stringify({
    event: 'media',
    sequenceNumber: 12,
    streamSid: SID,
    media: { track: 'inbound', chunk: 11, timestamp: 220, payload: Buffer.alloc(160, 0xff).toString('base64') },
  })
  t.match(codec.decode(numeric), { kind: 'media', sequenceNumber: 12, chunk: 11, timestamp: 220 })
  const outbound = JSON.stringify({
    event: 'media',
    sequenceNumber: '13',
    streamSid: SID,
    media: { track: 'outbound', chunk: '1', timestamp: '0', payload: '//8=' },
  })
  t.equal(codec.decode(outbound), null, 'outbound-track audio is ignored')
})

t.test('encodes outbound frames in the exact wire shape', async (t) => {
  const codec = new TwilioMediaCodec()
  const audio = Buffer.from([0xff, 0x7f, 0x00, 0x80, 0x12])
  t.equal(codec.encodeMedia(SID, audio), `{"event":"media","streamSid":"${SID}","media":{"payload":"/38AgBI="}}`)
  t.same(JSON.parse(codec.encodeMedia(SID, audio)), {
    event: 'media',
    streamSid: SID,
    media: { payload: audio.toString('base64') },
  })
  t.same(JSON.parse(codec.encodeMark(SID, 'turn "1" \\ chunk\n2')), {
    event: 'mark',
    streamSid: SID,
    mark: { name: 'turn "1" \\ chunk\n2' },
  })
  t.equal(codec.encodeClear(SID), `{"event":"clear","streamSid":"${SID}"}`)
  t.same(JSON.parse(codec.encodeClear('MZ"other')), { event: 'clear', streamSid: 'MZ"other' }, 'sid cache follows the sid')
  t.same(JSON.parse(codec.encodeClear(SID)), { event: 'clear', streamSid: SID })
})

t.test('round trip: what we encode, a carrier-side decoder reads back', async (t) => {
  const codec = new TwilioMediaCodec()
  const audio = Buffer.alloc(800, 0x55)
  const echoed = JSON.parse(codec.encodeMedia(SID, audio)) as { media: { payload: string } }
  t.same(Buffer.from(echoed.media.payload, 'base64'), audio)
})

t.test('decode stays cheap at call rate', async (t) => {
  const codec = new TwilioMediaCodec()
  const frame = JSON.stringify(call[2])
  const n = 20_000 // 400 s of one call
  const start = process.hrtime.bigint()
  for (let i = 0; i < n; i++) codec.decode(frame)
  const perFrameUs = Number(process.hrtime.bigint() - start) / 1000 / n
  t.ok(perFrameUs < 50, `decode ${perFrameUs.toFixed(2)} us/frame`)
})
