import t from 'tap'
import { readFileSync } from 'node:fs'
import {
  decodeClientFrame,
  encodeServerEvent,
  MAX_AUDIO_CHUNK_BYTES,
  MAX_TEXT_FRAME_BYTES,
  MAX_USER_TEXT_CHARS,
} from '../../transports/browser/browser-codec.js'
import type { PipelineEvent } from '../../pipeline/index.js'

interface ClientFixture {
  name: string
  frame: string
  expect?: Record<string, unknown> & { type: string; bytes?: number }
  error?: string
}
interface ServerFixture {
  name: string
  event: Record<string, unknown> & { audioBase64?: string }
  wire: Record<string, unknown> | null
}

const fixture = (name: string) => JSON.parse(readFileSync(new URL(`../fixtures/browser/${name}`, import.meta.url), 'utf8'))
const clientFixtures = fixture('client-messages.json') as ClientFixture[]
const serverFixtures = fixture('server-messages.json') as ServerFixture[]

t.test('recorded client messages decode (as strings and as buffers)', async (t) => {
  for (const f of clientFixtures) {
    for (const input of [f.frame, Buffer.from(f.frame, 'utf8')]) {
      const r = decodeClientFrame(input)
      if (f.error !== undefined) {
        t.equal(r.ok, false, `${f.name}: refused`)
        if (!r.ok) {
          t.equal(r.error.code, f.error, `${f.name}: code`)
          t.ok(r.error.message.length > 0, `${f.name}: has a reason`)
        }
        continue
      }
      t.equal(r.ok, true, `${f.name}: decodes`)
      if (!r.ok) continue
      const { bytes, ...expect } = f.expect!
      if (r.message.type === 'client.audio') {
        t.equal(r.message.audio.length, bytes, `${f.name}: audio bytes`)
        t.same({ type: r.message.type }, expect)
      } else {
        t.same(r.message, expect, f.name)
      }
    }
  }
})

t.test('audio content is the exact PCM the client encoded', async (t) => {
  const pcm = Buffer.from([1, 0, 255, 127, 0, 128])
  const r = decodeClientFrame(JSON.stringify({ type: 'client.audio', content: pcm.toString('base64') }))
  t.ok(r.ok && r.message.type === 'client.audio' && r.message.audio.equals(pcm))
})

t.test('binary frames are refused', async (t) => {
  const r = decodeClientFrame(Buffer.from('{"type":"client.ready"}'), true)
  t.same(r.ok ? null : r.error.code, 'binary_frame_not_supported')
})

t.test('size limits: frame, audio chunk, text', async (t) => {
  const big = JSON.stringify({ type: 'client.response.data', data: 'x'.repeat(MAX_TEXT_FRAME_BYTES) })
  const r1 = decodeClientFrame(big)
  t.same(r1.ok ? null : r1.error.code, 'frame_too_large')
  t.match(r1.ok ? '' : r1.error.message, /exceeds the 65536-byte limit/)
  // Multi-byte characters count as bytes, not characters.
  const wide = JSON.stringify({ type: 'client.response.text', content: 'é'.repeat(MAX_TEXT_FRAME_BYTES / 2) })
  const r2 = decodeClientFrame(wide)
  t.same(r2.ok ? null : r2.error.code, 'frame_too_large')
  const chunk = Buffer.alloc(MAX_AUDIO_CHUNK_BYTES + 2).toString('base64')
  const r3 = decodeClientFrame(JSON.stringify({ type: 'client.audio', content: chunk }))
  t.same(r3.ok ? null : r3.error.code, 'frame_too_large', 'more than 2 s in one chunk')
  const fits = decodeClientFrame(JSON.stringify({ type: 'client.audio', content: Buffer.alloc(MAX_AUDIO_CHUNK_BYTES).toString('base64') }))
  t.ok(fits.ok, 'exactly 2 s fits')
  const long = decodeClientFrame(JSON.stringify({ type: 'client.response.text', content: 'a'.repeat(MAX_USER_TEXT_CHARS + 1) }))
  t.same(long.ok ? null : long.error.code, 'frame_too_large')
})

t.test('an unknown type is named in the reason, truncated', async (t) => {
  const r = decodeClientFrame(JSON.stringify({ type: 'x'.repeat(500) }))
  t.equal(r.ok, false)
  if (!r.ok) t.ok(r.error.message.length < 120)
})

t.test('recorded pipeline events encode to the SPEC server messages', async (t) => {
  for (const f of serverFixtures) {
    const { audioBase64, ...rest } = f.event
    const event = (audioBase64 === undefined ? rest : { ...rest, audio: Buffer.from(audioBase64, 'base64') }) as PipelineEvent
    t.same(encodeServerEvent(event) ?? null, f.wire, f.name)
  }
})

t.test('delta_id is unique per audio message of a session', async (t) => {
  const ids = new Set<unknown>()
  for (let chunkId = 0; chunkId < 50; chunkId++) {
    const turnId = `assistant_${chunkId % 3}`
    ids.add(encodeServerEvent({ type: 'audio', turnId, chunkId, audio: Buffer.alloc(2), durationMs: 0.0625 })?.delta_id)
  }
  t.equal(ids.size, 50)
})
