/**
 * Call control from a browser session (additions to the SPEC): a `response.transfer` cannot move a browser, so
 * the client gets a clear `error` message and the backend a `data` event in the error registry's shape; the
 * session goes on.
 */
import t from 'tap'
import { eventually } from '../helpers/eventually.js'
import { openBrowserSession } from '../helpers/ws-client.js'
import { startVoiceHarness } from '../helpers/voice-harness.js'

const h = await startVoiceHarness()
t.teardown(() => h.close())

async function browser() {
  const auth = await h.gw.request('POST', '/v1/agents/web/authorize_session', { body: { agent_id: h.agent.id } })
  if (auth.status !== 200) throw new Error(auth.text)
  return openBrowserSession(h.gw.url, auth.body.client_session_key)
}

t.test('a transfer from a browser session: error message to the client, transfer_failed to the backend', async (t) => {
  h.backend.reply = (req) => {
    if (req.json.type === 'session.start') {
      return {
        kind: 'sse',
        steps: [{ data: { type: 'response.transfer', turn_id: req.json.turn_id, to: '+14155550100', content: 'One moment.' } }],
      }
    }
    return { kind: 'json', body: {} }
  }
  const start = h.backend.requests.length
  const b = await browser()
  const error = await b.waitFor((m) => m.type === 'error')
  t.same(error.m, {
    type: 'error',
    code: 'transfer_not_supported',
    message: 'only phone calls can be transferred (this is a browser session)',
  })
  const data = await h.backend.request(start + 1)
  t.equal(data.json.type, 'data')
  t.same(data.json.data, {
    transfer_failed: {
      to: '+14155550100',
      error: 'only phone calls can be transferred (this is a browser session)',
      code: 'transfer_not_supported',
    },
  })
  t.equal(b.ws.readyState, b.ws.OPEN, 'the session goes on')
  b.close()
})

t.test('a warm transfer from a browser session of an organization without a carrier fails, typed, and the visitor stays', async (t) => {
  // Browser callers are handed to a human through the organization's carrier (test/browser/warm-transfer.test.ts);
  // this organization has none, so the human cannot be dialled.
  h.backend.reply = (req) => {
    if (req.json.type === 'session.start') {
      const transfer = { type: 'response.transfer', turn_id: req.json.turn_id, mode: 'warm', to: '+14155550100', whisper: 'A refund.' }
      return { kind: 'sse', steps: [{ data: transfer }] }
    }
    return { kind: 'json', body: {} }
  }
  const start = h.backend.requests.length
  const b = await browser()
  const failed = await eventually(async () => h.backend.requests.slice(start).find((r) => r.json.type === 'transfer.failed'))
  t.match(failed.json, { type: 'transfer.failed', reason: 'failed', to: '+14155550100' }, 'the backend is told why')
  await b.waitFor((m) => m.type === 'response.audio' && m.turn_id !== 'transfer')
  t.pass("the backend said nothing: the visitor hears the failure's default line from the agent")
  t.equal(b.ws.readyState, b.ws.OPEN, 'the session goes on')
  b.close()
})

t.test('machine_detection on a browser session is refused with the error shape', async (t) => {
  const r = await h.gw.request('POST', '/v1/agents/web/authorize_session', { body: { agent_id: h.agent.id, machine_detection: true } })
  t.equal(r.status, 400)
  t.same(r.body, {
    error: 'machine_detection applies to outbound phone calls (initiate_outbound), not to browser sessions',
    code: 'machine_detection_not_supported',
  })
})
