/**
 * `response.dtmf` on a phone call (an addition to the SPEC): the tones reach the phone after the speech before
 * them, and the simulator's Goertzel receiver hears "12#" in order with Q.23 timing (100 ms tone, 100 ms gap).
 */
import t from 'tap'
import { decodeMulaw } from '../../pipeline/audio/g711-mulaw.js'
import { detectDtmf } from '../fakes/carrier/dtmf-decoder.js'
import { newCallSid } from '../fakes/carrier/phone-simulator.js'
import { callTenant, eventually, newBackendTenant, sessionOfCall, startVoiceWorld } from './carrier-setup.js'

t.test('response.dtmf "12#" after speech: decoded by the phone in order and timing, recorded in the transcript', async (t) => {
  const { c } = await startVoiceWorld(t)
  const { tenant, backend } = await newBackendTenant(t, c, 'dtmf-token-1')
  backend.reply = (req) => ({
    kind: 'sse',
    steps:
      req.json.type === 'session.start'
        ? [
            { data: { type: 'response.tts', turn_id: req.json.turn_id, content: 'Opening the menu.' } },
            { data: { type: 'response.dtmf', turn_id: req.json.turn_id, digits: '12#' } },
            { data: { type: 'response.end', turn_id: req.json.turn_id } },
          ]
        : [{ data: { type: 'response.end', turn_id: req.json.turn_id } }],
  })
  const callSid = newCallSid()
  const r = await callTenant(c, tenant, { callSid })
  if (r.outcome !== 'connected') throw new Error(JSON.stringify(r))
  const call = r.call
  const heard = await eventually(async () => {
    const digits = detectDtmf(decodeMulaw(call.receivedAudio()))
    return digits.length >= 3 ? digits : undefined
  }, 10_000)
  t.same(
    heard.map((d) => d.digit),
    ['1', '2', '#'],
    'the digits in order',
  )
  for (const d of heard) t.ok(Math.abs(d.endMs - d.startMs - 100) <= 10, `${d.digit} lasts ${d.endMs - d.startMs} ms`)
  for (let i = 1; i < heard.length; i++) {
    const gap = heard[i]!.startMs - heard[i - 1]!.endMs
    t.ok(Math.abs(gap - 100) <= 10, `gap before ${heard[i]!.digit}: ${gap} ms`)
  }
  const totalMs = call.receivedAudio().length / 8
  t.ok(totalMs > 700, 'speech came first')
  t.ok(
    Math.abs(heard[0]!.startMs - (totalMs - 600)) <= 10,
    `the tones follow the speech directly and end the audio (${heard[0]!.startMs} of ${totalMs} ms)`,
  )
  const row = await eventually(async () => sessionOfCall(c, callSid))
  const entries = await eventually(async () => {
    const rows = await c.gw.store.db.selectFrom('transcript_entries').selectAll().where('session_id', '=', row.id).execute()
    return rows.length > 0 ? rows : undefined
  })
  t.equal(entries[0]?.assistant_message, 'Opening the menu. [DTMF 12#]', 'the transcript records the tones')
  await call.hangup()
})

t.test('response.dtmf with empty digits: nothing is played, the backend gets invalid_dtmf_digits as data', async (t) => {
  const { c } = await startVoiceWorld(t)
  const { tenant, backend } = await newBackendTenant(t, c, 'dtmf-token-2')
  backend.reply = (req) =>
    req.json.type === 'data'
      ? { kind: 'json', body: {} }
      : {
          kind: 'sse',
          steps: [
            { data: { type: 'response.dtmf', turn_id: req.json.turn_id, digits: '' } },
            { data: { type: 'response.end', turn_id: req.json.turn_id } },
          ],
        }
  const r = await callTenant(c, tenant)
  if (r.outcome !== 'connected') throw new Error(JSON.stringify(r))
  const data = await eventually(async () => backend.requests.find((q) => q.json.type === 'data'))
  t.same(data.json.data, { dtmf_failed: { digits: '', error: 'response.dtmf: digits is empty', code: 'invalid_dtmf_digits' } })
  t.equal(r.call.receivedAudio().length, 0, 'no tones')
  t.ok(r.call.isOpen, 'the call goes on')
  await r.call.hangup()
})
