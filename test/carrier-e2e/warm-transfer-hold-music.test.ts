/**
 * An agent's own hold music (`transfer.hold_audio_url`): a WAV at 22.05 kHz and an MP3 (MPEG-2 layer III, 22.05
 * kHz, `test/fixtures/audio/hold-600hz-22k.mp3`: 2 s of a 600 Hz tone, encoded once with lamejs 1.2.1) served by a
 * local web server. While the human rings, the caller hears the file's 600 Hz instead of the built-in chime (the
 * first time as soon as it is loaded, later from the start); the file is fetched once for every transfer of the
 * process; a URL that answers 404 leaves the built-in hold audio.
 */
import { readFileSync } from 'node:fs'
import { createServer } from 'node:http'
import type { AddressInfo } from 'node:net'
import { fileURLToPath } from 'node:url'
import t from 'tap'
import wavefile from 'wavefile'
import { FakeCallsApi } from '../fakes/carrier/fake-calls-api.js'
import { newCallSid } from '../fakes/carrier/phone-simulator.js'
import { decodeMulaw } from '../../pipeline/audio/g711-mulaw.js'
import { holdAudioFrame } from '../../gateway/transfer/hold-audio.js'
import { encodeMulaw } from '../../pipeline/audio/g711-mulaw.js'
import { toneFrames } from '../helpers/tones.js'
import { callTenant, newBackendTenant, sse, startVoiceWorld } from './carrier-setup.js'

const HUMAN = '+14155550100'
const TOKEN = 'hold-music-token'
const MP3 = readFileSync(fileURLToPath(new URL('../fixtures/audio/hold-600hz-22k.mp3', import.meta.url)))

function wav600(): Buffer {
  const rate = 22050
  const pcm = new Int16Array(rate * 2)
  for (let i = 0; i < pcm.length; i++) pcm[i] = Math.round(9000 * Math.sin((2 * Math.PI * 600 * i) / rate))
  const w = new wavefile.WaveFile()
  w.fromScratch(1, rate, '16', pcm)
  return Buffer.from(w.toBuffer())
}

const requests: string[] = []
const files: Record<string, Buffer> = { '/hold.wav': wav600(), '/hold.mp3': MP3 }
const site = createServer((req, res) => {
  requests.push(req.url ?? '')
  const body = files[req.url ?? '']
  if (body === undefined) res.writeHead(404).end()
  else res.writeHead(200, { 'content-type': 'application/octet-stream', 'content-length': body.length }).end(body)
})
await new Promise<void>((r) => site.listen(0, '127.0.0.1', r))
t.teardown(() => new Promise((r) => site.close(r)))
const base = `http://127.0.0.1:${(site.address() as AddressInfo).port}`

const { c } = await startVoiceWorld(t, { ALLOW_INSECURE_WEBHOOKS: '1' })
const api = await FakeCallsApi.start({ authToken: TOKEN, stepMs: 5, rewriteUrl: c.rewrite })
t.teardown(() => api.close())
api.outcome = { kind: 'manual' }
const { tenant, backend } = await newBackendTenant(t, c, TOKEN, undefined, api)
backend.reply = (req) => {
  const turnId = req.json.turn_id as string
  if (req.json.type === 'session.start') {
    return {
      kind: 'sse',
      steps: [{ data: { type: 'response.transfer', turn_id: turnId, mode: 'warm', to: HUMAN, hold: 'Hold on.', timeout_s: 20 } }],
    }
  }
  return sse(turnId, 'ok')
}

async function setHoldAudio(url: string): Promise<void> {
  const agent = (await c.gw.request('GET', `/v1/agents/${tenant.agentId}`, { key: tenant.apiKey })).body
  const config = { ...agent.config, transfer: { hold_audio_url: url } }
  const r = await c.gw.request('POST', `/v1/agents/${tenant.agentId}`, { key: tenant.apiKey, body: { config } })
  if (r.status !== 200) throw new Error(r.text)
}

/** What a caller heard during 2.5 s of the human ringing. */
async function heardOnHold(): Promise<Buffer> {
  const dialled = api.nextCall()
  const callSid = newCallSid()
  const r = await callTenant(c, tenant, { callSid, from: '+442071838750', realtime: true, silenceWhenIdle: true, playbackSpeed: 4 })
  if (r.outcome !== 'connected') throw new Error('not connected')
  api.addInbound(callSid, r.call)
  const human = await dialled
  await human.progress('ringing')
  await new Promise((res) => setTimeout(res, 2_500))
  const audio = Buffer.from(r.call.receivedAudio())
  await r.call.hangup()
  await human.done
  return audio
}

const frames = (audio: Buffer, hz: number) => toneFrames(decodeMulaw(audio, new Int16Array(audio.length)), hz, 8000)

for (const [path, what] of [
  ['/hold.wav', 'a WAV (22.05 kHz)'],
  ['/hold.mp3', 'an MP3 (MPEG-2 layer III, 22.05 kHz)'],
] as const) {
  t.test(`the agent's hold music, ${what}, replaces the built-in hold audio; fetched once`, async (t) => {
    await setHoldAudio(`${base}${path}`)
    const before = requests.filter((u) => u === path).length
    const first = await heardOnHold()
    t.ok(frames(first, 600) >= 40, `the caller heard the file's 600 Hz (${frames(first, 600)} frames)`)
    const second = await heardOnHold()
    t.ok(frames(second, 600) >= 40, 'and on the next transfer')
    t.equal(second.indexOf(Buffer.from(encodeMulaw(holdAudioFrame(8000, 5)))), -1, 'from its start, once loaded: no built-in hold audio')
    t.equal(requests.filter((u) => u === path).length - before, 1, 'fetched once for both')
  })
}

t.test('a hold music URL that answers 404 leaves the built-in hold audio', async (t) => {
  await setHoldAudio(`${base}/missing.mp3`)
  const heard = await heardOnHold()
  t.equal(frames(heard, 600), 0)
  t.ok(heard.indexOf(Buffer.from(encodeMulaw(holdAudioFrame(8000, 5)))) >= 0, 'the built-in hold audio played')
})
