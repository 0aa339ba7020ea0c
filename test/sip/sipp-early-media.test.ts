/**
 * Early media on a warm transfer's SIP leg, with sipp as the trunk (fixtures/sipp/early-media-404.xml): the human's
 * number rings (180, the caller hears the UK ringback of a +44 caller), then the trunk plays an announcement as
 * early media (183 with SDP and RTP, a 950 Hz tone here) and fails the call with 404. The caller hears the
 * announcement in place of the ringback (the tone measured in what the test phone received, and no ringback after
 * it), then the agent's reply to `transfer.failed` (reason `failed`). sipp exits 0 only when the gateway's INVITE
 * and the ACK of the 404 came as written.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import t from 'tap'
import { decodeMulaw } from '../../pipeline/audio/g711-mulaw.js'
import type { BackendReply } from '../fakes/backend/fake-backend.js'
import { eventually, newBackendTenant, sse } from '../carrier-e2e/carrier-setup.js'
import { freePort } from '../helpers/nginx.js'
import { SipCaller } from '../helpers/sip-caller.js'
import { pcmuWav, runSipp, sippMissing, sippScenario } from '../helpers/sipp.js'
import { dualToneFrames, toneFrames } from '../helpers/tones.js'
import { toolSkip } from '../helpers/tool-required.js'
import { tone } from '../transfer/bridge-audio-helpers.js'
import { startSipWorld } from './sip-setup.js'

const skip = toolSkip(sippMissing)
const HUMAN = '+14155550100'
/** The announcement's tone (the first of the special information tones that precede "not in service"). */
const ANNOUNCEMENT_HZ = 950
/** The UK ringback a +44 caller hears while the human's number rings. */
const UK_RINGBACK = [400, 450] as const

t.test('an announcement on the ringing SIP leg reaches the caller instead of the ringback', { skip }, async (t) => {
  const { c, sipPort } = await startSipWorld(t)
  const { tenant, backend } = await newBackendTenant(t, c, 'sipp-early-media-token')
  const trunkPort = await freePort()
  const made = await c.gw.request('POST', '/v1/sip/trunks', {
    key: tenant.apiKey,
    body: { name: 'pbx', inbound: { allowed_cidrs: ['127.0.0.1'] }, outbound: { uri: `sip:127.0.0.1:${trunkPort}` } },
  })
  if (made.status !== 201) throw new Error(made.text)
  backend.reply = (req): BackendReply => {
    const turnId = req.json.turn_id as string
    if (req.json.type === 'session.start') {
      return { kind: 'sse', steps: [{ data: { type: 'response.transfer', turn_id: turnId, mode: 'warm', to: HUMAN, timeout_s: 20 } }] }
    }
    return sse(turnId, req.json.type === 'transfer.failed' ? 'That number is not in service.' : 'ok')
  }

  // sipp plays announcement.wav from the folder it runs in: 2 s of the tone as PCMU.
  const dir = mkdtempSync(join(tmpdir(), 'voxgate-sipp-early-'))
  t.teardown(() => rmSync(dir, { recursive: true, force: true }))
  writeFileSync(join(dir, 'announcement.wav'), pcmuWav(Buffer.from(tone('ulaw_8000', ANNOUNCEMENT_HZ, 2000))))
  const mediaPort = await freePort()
  const args = ['-sf', sippScenario('early-media-404'), '-m', '1', '-i', '127.0.0.1', '-p', String(trunkPort)]
  args.push('-mi', '127.0.0.1', '-mp', String(mediaPort), '-timeout', '30', '-timeout_error', '-nostdin')
  const trunk = runSipp(args, { cwd: dir, timeoutMs: 35_000 })

  const p = await SipCaller.open({ host: '127.0.0.1', port: sipPort })
  t.teardown(() => p.close())
  // A phone that takes no REFER: the transfer is the gateway's bridge.
  p.invite(tenant.number, { extra: ['Allow: INVITE, ACK, BYE, CANCEL, OPTIONS'] })
  const ok = await p.final()
  t.equal(ok.status, 200)
  p.ack(ok)

  const failed = await eventually(
    async () => backend.requests.find((r) => r.json.type === 'transfer.failed'),
    20_000,
    'transfer.failed after the 404',
  )
  t.match(failed.json, { reason: 'failed', to: HUMAN }, 'the 404 fails the transfer as before')
  const run = await trunk
  t.equal(run.code, 0, `sipp played the trunk as written${run.code === 0 ? '' : `:\n${run.output}`}`)
  // The agent's reply (the fake TTS speaks 440 Hz) follows the announcement.
  const heardFrames = () => {
    const ulaw = Buffer.concat(p.heard.filter((h) => h.payloadType === 0).map((h) => h.payload))
    const pcm = decodeMulaw(ulaw)
    const frames: Int16Array[] = []
    for (let at = 0; at + 160 <= pcm.length; at += 160) frames.push(pcm.subarray(at, at + 160))
    return frames
  }
  await eventually(
    async () => (heardFrames().filter((f) => toneFrames(f, 440) === 1).length >= 20 ? true : undefined),
    10_000,
    "the agent's reply to transfer.failed",
  )
  const frames = heardFrames()
  const isAnnouncement = (f: Int16Array) => toneFrames(f, ANNOUNCEMENT_HZ) === 1
  const isRingback = (f: Int16Array) => dualToneFrames(f, UK_RINGBACK).tone === 1
  const first = frames.findIndex(isAnnouncement)
  t.ok(first > 0, 'the caller heard the announcement')
  const announced = frames.filter(isAnnouncement).length
  t.ok(announced >= 75, `most of the 2 s announcement reached the caller (${announced} frames of ${ANNOUNCEMENT_HZ} Hz)`)
  const ringing = frames.slice(0, first).filter(isRingback).length
  t.ok(ringing >= 10, `the UK ringback played while it rang, before the announcement (${ringing} frames)`)
  t.equal(frames.slice(first).filter(isRingback).length, 0, 'no ringback once the early media began')
  p.bye()
  await eventually(async () => (c.gw.gateway.sip?.liveCalls === 0 ? true : undefined), 5_000, 'no SIP call left')
})
