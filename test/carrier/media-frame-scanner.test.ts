// The bytes fast path of the media codec must decode every frame exactly as the general JSON path does.
import { readFileSync } from 'node:fs'
import t from 'tap'
import type { CarrierInbound } from '../../carrier/carrier-stream-events.js'
import { TwilioMediaCodec } from '../../carrier/twilio/media-codec.js'
import { MediaFrameScanner } from '../../carrier/twilio/media-frame-scanner.js'

const fixture = <T>(name: string): T => JSON.parse(readFileSync(new URL(`../fixtures/carrier/${name}`, import.meta.url), 'utf8')) as T

const call = fixture<Record<string, unknown>[]>('media-stream-call.json')
const malformed = fixture<{ name: string; raw: string }[]>('malformed-frames.json')
const media = call.filter((f) => f.event === 'media')
const SID = 'MZ18ad3ab5a668481ce02b83e7395059f0'
const PAYLOAD = (media[0] as { media: { payload: string } }).media.payload

/** Comparable form of a decode result (payload as hex). */
function plain(e: CarrierInbound | null): unknown {
  if (e === null || e.kind !== 'media') return e
  return { ...e, payload: e.payload.toString('hex') }
}

/** Decodes `text` as a string and as bytes with fresh codecs; returns a difference, or undefined. */
function differs(text: string): string | undefined {
  const viaString = JSON.stringify(plain(new TwilioMediaCodec().decode(text)))
  const viaBytes = JSON.stringify(plain(new TwilioMediaCodec().decode(Buffer.from(text, 'utf8'))))
  return viaString === viaBytes
    ? undefined
    : `${JSON.stringify(text).slice(0, 160)}: string ${viaString.slice(0, 120)} / bytes ${viaBytes.slice(0, 120)}`
}

function lcg(seed: number): () => number {
  let s = seed >>> 0
  return () => {
    s = (Math.imul(s, 1664525) + 1013904223) >>> 0
    return s / 2 ** 32
  }
}

/** Hand-written variants of a media frame: every field absent, odd, reordered, duplicated or escaped. */
function variants(): string[] {
  const m = (mediaPart: string, top = `"event":"media","sequenceNumber":"7","streamSid":"${SID}"`) => `{${top},"media":{${mediaPart}}}`
  const fields = `"track":"inbound","chunk":"3","timestamp":"60","payload":"${PAYLOAD}"`
  const out = [
    m(fields),
    `{"media":{${fields}},"streamSid":"${SID}","sequenceNumber":"7","event":"media"}`,
    ` { "event" : "media" ,\n\t"sequenceNumber" : 7 , "streamSid" : "${SID}" , "media" : { "payload" : "${PAYLOAD}" , "chunk" : 3 } } \n`,
    m(fields, `"event":"media","streamSid":"${SID}"`),
    m(fields, `"event":"media","sequenceNumber":"7"`),
    `{"event":"media","streamSid":"${SID}"}`,
    `{"event":"media","streamSid":"${SID}","media":"x"}`,
    `{"event":"media","streamSid":"${SID}","media":null}`,
    `{"event":"media","streamSid":"${SID}","media":[]}`,
    m(''),
    m(`"track":"inbound"`),
    m(`"payload":""`),
    m(`"payload":"/w=="`),
    m(`"payload":"/38="`),
    m(`"payload":"/38A"`),
    m(`"payload":"/x=="`),
    m(`"payload":"-_8A"`),
    // Escapes inside the payload (valid JSON: the general path reads "/38="); the fast path finds its closing quote
    // natively and must still give up on them.
    m(`"payload":"\\/38="`),
    m(`"payload":"\\u002f38="`),
    m(`"payload":"/3\\"8="`),
    m(`"payload":"/38=\\""`),
    m(`"payload":"/38!"`),
    m(`"payload":"/3 8A"`),
    m(`"payload":"/38"`),
    m(`"payload":"/=8A"`),
    m(`"payload":"===="`),
    m(`"payload":"/38A=="`),
    m(`"payload":1234`),
    m(`"payload":"\\/38A"`),
    m(`"track":"outbound","payload":"/38A"`),
    m(`"track":"inbound_track","payload":"/38A"`),
    m(`"track":"\\u0069nbound","payload":"/38A"`),
    m(`"track":"inböund","payload":"/38A"`),
    m(`"track":5,"payload":"/38A"`),
    m(`"track":null,"payload":"/38A"`),
    m(`"chunk":"007","payload":"/38A"`),
    m(`"chunk":007,"payload":"/38A"`),
    m(`"chunk":0,"payload":"/38A"`),
    m(`"chunk":"","payload":"/38A"`),
    m(`"chunk":"-1","payload":"/38A"`),
    m(`"chunk":-1,"payload":"/38A"`),
    m(`"chunk":1.5,"payload":"/38A"`),
    m(`"chunk":1e3,"payload":"/38A"`),
    m(`"chunk":"1e3","payload":"/38A"`),
    m(`"chunk":"1234567890123456","payload":"/38A"`),
    m(`"chunk":123456789012345,"payload":"/38A"`),
    m(`"chunk":1234567890123456,"payload":"/38A"`),
    m(`"chunk":12345678901234567890,"payload":"/38A"`),
    m(`"chunk":true,"payload":"/38A"`),
    m(`"timestamp":"12a","payload":"/38A"`),
    m(`"timestamp":0,"payload":"/38A"`),
    m(`"payload":"/38A","payload":"/38B"`),
    m(`"payload":"/38A","extra":"x","more":12,"obj":{"a":1}`),
    m(`"payload":"/38A","extra":[1,2]`),
    m(`"payload":"/38A"`, `"event":"media","event":"media","streamSid":"${SID}"`),
    m(`"payload":"/38A"`, `"event":"media","streamSid":"${SID}","streamSid":"MZother"`),
    m(`"payload":"/38A"`, `"event":"media","streamSid":"MZ\\u0041","x":true`),
    m(`"payload":"/38A"`, `"event":"media","streamSid":"${SID}","track":"outbound","payload":5`),
    `{"event":"media","streamSid":"${SID}","payload":"/38A","media":{}}`,
    m(`"payload":"/38A"`, `"event":"media","streamSid":"${SID}","track":"outbound"`),
    m(`"payload":"/38A","streamSid":"MZother","event":"mark"`),
    m(`"payload":"/38A"`, `"event":"media","streamSid":"${SID}","media":{"payload":"AAAA"}`),
    m(`"payload":"/38A"`, `"event":"mark","streamSid":"${SID}"`),
    m(`"payload":"/38A"`, `"event":"Media","streamSid":"${SID}"`),
    m(`"payload":"/38A"`, `"event":5,"streamSid":"${SID}"`),
    m(`"payload":"/38A"`, `"streamSid":"${SID}"`),
    m(`"payload":"/38A"`, `"event":"media","streamSid":5`),
    m(`"payload":"/38A"`, `"event":"media","streamSid":""`),
    m(`"payload":"/38A"`, `"event":"media","sequenceNumber":"01","streamSid":"${SID}"`),
    `${m(fields)} x`,
    `${m(fields)}}`,
    `[${m(fields)}]`,
    '{}',
    '',
    ' ',
    'null',
  ]
  return out
}

t.test('the recorded call and the malformed fixtures decode the same from bytes as from a string', async (t) => {
  const frames = [...call.map((f) => JSON.stringify(f)), ...malformed.map((m) => m.raw)]
  const diffs = frames.map(differs).filter((d) => d !== undefined)
  t.same(diffs, [])
  t.ok(frames.length > 30)
})

t.test('the scanner takes the plain media frames itself', async (t) => {
  const scanner = new MediaFrameScanner()
  for (const f of media) {
    const m = scanner.scan(Buffer.from(JSON.stringify(f)))
    t.ok(m, 'scanned without the general path')
    t.equal(m?.payload?.toString('base64'), (f as { media: { payload: string } }).media.payload)
  }
  // And it stays out of the way of everything else.
  for (const f of call.filter((f) => f.event !== 'media')) t.equal(scanner.scan(Buffer.from(JSON.stringify(f))), undefined)
  t.equal(
    scanner.scan(Buffer.from(`{"event":"media","streamSid":"${SID}","media":{"payload":"-_8A"}}`)),
    undefined,
    'base64url is left to Buffer.from',
  )
})

t.test('hand-written variants decode the same both ways', async (t) => {
  const all = variants()
  const diffs = all.map(differs).filter((d) => d !== undefined)
  t.same(diffs, [])
  // The variants reach both the fast path and the general one (the comparison would prove little otherwise).
  const scanner = new MediaFrameScanner()
  const fast = all.filter((v) => scanner.scan(Buffer.from(v)) !== undefined).length
  t.ok(fast >= 10 && fast < all.length - 10, `${fast} of ${all.length} on the fast path`)
})

t.test('every prefix and 5000 random mutations of a media frame decode the same both ways', async (t) => {
  const base = `{"event":"media","sequenceNumber":"12","media":{"track":"inbound","chunk":"11","timestamp":"220","payload":"/7mrpKCg/38="},"streamSid":"${SID}"}`
  const diffs: string[] = []
  for (let n = 0; n <= base.length; n++) {
    const d = differs(base.slice(0, n))
    if (d) diffs.push(d)
  }
  const rnd = lcg(7)
  const alphabet = '{}[]":,. \\-+=/0123456789aeEmdiu\u00e9'
  for (let i = 0; i < 5000; i++) {
    const chars = [...base]
    const edits = 1 + Math.floor(rnd() * 3)
    for (let e = 0; e < edits; e++) {
      const at = Math.floor(rnd() * chars.length)
      const r = rnd()
      const c = alphabet[Math.floor(rnd() * alphabet.length)]!
      if (r < 0.4) chars[at] = c
      else if (r < 0.7) chars.splice(at, 1)
      else chars.splice(at, 0, c)
    }
    const d = differs(chars.join(''))
    if (d) diffs.push(d)
  }
  t.same(diffs.slice(0, 5), [])
})

t.test('one scanner keeps the stream id right when it changes between frames', async (t) => {
  const codec = new TwilioMediaCodec()
  const frame = (sid: string) => Buffer.from(`{"event":"media","streamSid":"${sid}","media":{"payload":"/38A"}}`)
  const sids = [SID, SID, 'MZ2', SID, 'MZ18ad3ab5a668481ce02b83e7395059f1']
  t.same(
    sids.map((s) => (codec.decode(frame(s)) as { streamSid: string }).streamSid),
    sids,
  )
})
