/**
 * Early media on a warm transfer's SIP leg, with sipp as the trunk. A number not in service
 * (fixtures/sipp/early-media-404.xml): the human's number rings (180, the caller hears the UK ringback of a +44
 * caller), then the trunk plays an announcement as early media (183 with SDP and RTP, a 950 Hz tone here) and fails
 * the call with 404. The caller hears the announcement in place of the ringback (the tone measured in what the test
 * phone received, and no ringback after it), then the agent's reply to `transfer.failed` (reason `failed`). A queue
 * (fixtures/sipp/early-media-answer.xml) plays its own ringback as early media and answers on the same media: the
 * caller hears both, the bridge opens on the answer. sipp exits 0 only when the gateway's messages came as written.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import t, { type Test } from 'tap'
import { decodeMulaw } from '../../pipeline/audio/g711-mulaw.js'
import type { BackendReply } from '../fakes/backend/fake-backend.js'
import { eventually, newBackendTenant, sse } from '../carrier-e2e/carrier-setup.js'
import { freePort } from '../helpers/nginx.js'
import { SipCaller } from '../helpers/sip-caller.js'
import { pcmuWav, runSipp, type SippRun, sippMissing, sippScenario } from '../helpers/sipp.js'
import { dualToneFrames, toneFrames } from '../helpers/tones.js'
import { toolSkip } from '../helpers/tool-required.js'
import { tone } from '../transfer/bridge-audio-helpers.js'
import { startSipWorld } from './sip-setup.js'

const skip = toolSkip(sippMissing)
const HUMAN = '+14155550100'
/** The announcement's tone (the first of the special information tones that precede "not in service"). */
const ANNOUNCEMENT_HZ = 950
/** What the human says once answered. */
const HUMAN_HZ = 1400
/** The UK ringback a +44 caller hears while the human's number rings. */
const UK_RINGBACK = [400, 450] as const

const { c, sipPort } = await startSipWorld(t)
const { tenant, backend } = await newBackendTenant(t, c, 'sipp-early-media-token')
const trunkPort = await freePort()
{
  const made = await c.gw.request('POST', '/v1/sip/trunks', {
    key: tenant.apiKey,
    body: { name: 'pbx', inbound: { allowed_cidrs: ['127.0.0.1'] }, outbound: { uri: `sip:127.0.0.1:${trunkPort}` } },
  })
  if (made.status !== 201) throw new Error(made.text)
}

/** The welcome asks for a warm transfer (`fields` complete it); `transfer.failed` gets a line of its own. */
function script(fields: Record<string, unknown>): void {
  backend.reply = (req): BackendReply => {
    const turnId = req.json.turn_id as string
    if (req.json.type === 'session.start') {
      return { kind: 'sse', steps: [{ data: { type: 'response.transfer', turn_id: turnId, mode: 'warm', to: HUMAN, ...fields } }] }
    }
    return sse(turnId, req.json.type === 'transfer.failed' ? 'That number is not in service.' : 'ok')
  }
}

/** sipp as the trunk playing `scenario`, its announcement.wav (`announcementMs` of 950 Hz) and human.wav of 1400 Hz as PCMU. */
async function trunk(t: Test, scenario: string, announcementMs: number): Promise<{ run: Promise<SippRun> }> {
  const dir = mkdtempSync(join(tmpdir(), 'voxgate-sipp-early-'))
  t.teardown(() => rmSync(dir, { recursive: true, force: true }))
  writeFileSync(join(dir, 'announcement.wav'), pcmuWav(Buffer.from(tone('ulaw_8000', ANNOUNCEMENT_HZ, announcementMs))))
  writeFileSync(join(dir, 'human.wav'), pcmuWav(Buffer.from(tone('ulaw_8000', HUMAN_HZ, 1000))))
  const mediaPort = await freePort()
  const args = ['-sf', sippScenario(scenario), '-m', '1', '-i', '127.0.0.1', '-p', String(trunkPort)]
  args.push('-mi', '127.0.0.1', '-mp', String(mediaPort), '-timeout', '30', '-timeout_error', '-nostdin')
  // Wrapped: an async function's returned promise would be awaited with it.
  return { run: runSipp(args, { cwd: dir, timeoutMs: 35_000 }) }
}

/** A connected call from the test phone, a phone that takes no REFER (the transfer is the gateway's bridge). */
async function call(t: Test): Promise<SipCaller> {
  const p = await SipCaller.open({ host: '127.0.0.1', port: sipPort })
  t.teardown(() => p.close())
  p.invite(tenant.number, { extra: ['Allow: INVITE, ACK, BYE, CANCEL, OPTIONS'] })
  const ok = await p.final()
  if (ok.status !== 200) throw new Error(`${ok.status} ${ok.reason}`)
  p.ack(ok)
  return p
}

/** What the phone heard (PCMU), cut in 20 ms frames of PCM16. */
function heardFrames(p: SipCaller): Int16Array[] {
  const pcm = decodeMulaw(Buffer.concat(p.heard.filter((h) => h.payloadType === 0).map((h) => h.payload)))
  const frames: Int16Array[] = []
  for (let at = 0; at + 160 <= pcm.length; at += 160) frames.push(pcm.subarray(at, at + 160))
  return frames
}
const isTone = (hz: number) => (f: Int16Array) => toneFrames(f, hz) === 1
const isRingback = (f: Int16Array) => dualToneFrames(f, UK_RINGBACK).tone === 1

t.test('an announcement on the ringing SIP leg reaches the caller instead of the ringback', { skip }, async (t) => {
  script({ timeout_s: 20 })
  const sipp = await trunk(t, 'early-media-404', 2000)
  const asked = backend.requests.filter((r) => r.json.type === 'transfer.failed').length
  const p = await call(t)
  const failed = await eventually(
    async () => backend.requests.filter((r) => r.json.type === 'transfer.failed')[asked],
    20_000,
    'transfer.failed after the 404',
  )
  t.match(failed.json, { reason: 'failed', to: HUMAN }, 'the 404 fails the transfer as before')
  const run = await sipp.run
  t.equal(run.code, 0, `sipp played the trunk as written${run.code === 0 ? '' : `:\n${run.output}`}`)
  // The agent's reply (the fake TTS speaks 440 Hz) follows the announcement.
  await eventually(
    async () => (heardFrames(p).filter(isTone(440)).length >= 20 ? true : undefined),
    10_000,
    "the agent's reply to transfer.failed",
  )
  const frames = heardFrames(p)
  const first = frames.findIndex(isTone(ANNOUNCEMENT_HZ))
  t.ok(first > 0, 'the caller heard the announcement')
  const announced = frames.filter(isTone(ANNOUNCEMENT_HZ)).length
  t.ok(announced >= 75, `most of the 2 s announcement reached the caller (${announced} frames of ${ANNOUNCEMENT_HZ} Hz)`)
  const ringing = frames.slice(0, first).filter(isRingback).length
  t.ok(ringing >= 10, `the UK ringback played while it rang, before the announcement (${ringing} frames)`)
  t.equal(frames.slice(first).filter(isRingback).length, 0, 'no ringback once the early media began')
  p.bye()
  await eventually(async () => (c.gw.gateway.sip?.liveCalls === 0 ? true : undefined), 5_000, 'no SIP call left')
})

t.test("a queue's early media, then its answer on the same media: the caller hears both", { skip }, async (t) => {
  script({ accept: 'none', timeout_s: 20 })
  const sipp = await trunk(t, 'early-media-answer', 1000)
  const p = await call(t)
  await eventually(
    async () => (heardFrames(p).filter(isTone(HUMAN_HZ)).length >= 25 ? true : undefined),
    15_000,
    "the human's voice after the answer",
  )
  const frames = heardFrames(p)
  const announced = frames.filter(isTone(ANNOUNCEMENT_HZ)).length
  t.ok(announced >= 35, `the queue's early media reached the caller (${announced} frames of ${ANNOUNCEMENT_HZ} Hz)`)
  const answeredAt = frames.findIndex(isTone(HUMAN_HZ))
  t.ok(frames.findIndex(isTone(ANNOUNCEMENT_HZ)) < answeredAt, 'before the answer')
  t.pass("then the human's voice, bridged over the media the early media opened")
  p.bye()
  const run = await sipp.run
  t.equal(run.code, 0, `sipp answered and got the gateway's BYE${run.code === 0 ? '' : `:\n${run.output}`}`)
  await eventually(async () => (c.gw.gateway.sip?.liveCalls === 0 ? true : undefined), 5_000, 'no SIP call left')
})
