/**
 * `response.dnc` during a campaign call: the backend says the callee wants no more calls; the number goes on the
 * organization's do-not-call list at once (source `call`) and no later call reaches it, though its retry policy
 * would have dialled it again.
 */
import t from 'tap'
import { startFakeBackend } from '../fakes/backend/fake-backend.js'
import { startFakeDeepgram } from '../fakes/deepgram/fake-deepgram.js'
import { startFakeElevenLabs } from '../fakes/elevenlabs/fake-elevenlabs.js'
import { eventually, newTenant, startCarrierGateway } from '../carrier-e2e/carrier-setup.js'
import { campaignBody, runCampaign, startScriptedApi, waitForStatus } from './campaign-setup.js'

const deepgram = await startFakeDeepgram({ apiKey: 'dg-key', script: () => undefined })
t.teardown(() => deepgram.close())
const elevenlabs = await startFakeElevenLabs({ apiKey: 'el-key', msPerChar: 1, chunkMs: 100, chunkIntervalMs: 0 })
t.teardown(() => elevenlabs.close())
const c = await startCarrierGateway(
  { STT_VENDOR_A_URL: deepgram.url, STT_VENDOR_A_API_KEY: 'dg-key', TTS_VENDOR_A_URL: elevenlabs.url, TTS_VENDOR_A_API_KEY: 'el-key' },
  undefined,
  undefined,
  { tickMs: 25 },
)
t.teardown(() => c.gw.close())

t.test('response.dnc lists the callee during the call; the campaign never calls them again', async (t) => {
  const CALLEE = '+14155550501'
  const { api, dialled } = await startScriptedApi(c, { [CALLEE]: ['answer'] })
  t.teardown(() => api.close())
  const tenant = await newTenant(c, { template: 'voice-agent-webhook', carrier: { authToken: api.authToken, api } })
  const backend = await startFakeBackend({ secret: tenant.webhookSecret })
  t.teardown(() => backend.close())
  const agent = (await c.gw.request('GET', `/v1/agents/${tenant.agentId}`, { key: tenant.apiKey })).body
  const config = structuredClone(agent.config)
  config.plugins = config.plugins.map((p: { use: string; options: Record<string, unknown> }) =>
    p.use === 'agent.webhook' ? { ...p, options: { ...p.options, url: backend.url } } : p,
  )
  t.equal((await c.gw.request('POST', `/v1/agents/${tenant.agentId}`, { key: tenant.apiKey, body: { config } })).status, 200)
  // The welcome turn: the callee (scripted) says no more calls; the agent lists them and hangs up politely.
  backend.reply = (req) => ({
    kind: 'sse',
    steps: [
      { data: { type: 'response.tts', content: 'Understood, we will not call again.', turn_id: req.json.turn_id } },
      { data: { type: 'response.dnc', turn_id: req.json.turn_id } },
      { data: { type: 'response.hangup', turn_id: req.json.turn_id } },
    ],
  })
  const id = await runCampaign(c, tenant, campaignBody(tenant), [{ phone_number: CALLEE }])
  const listed = await eventually(async () => {
    const r = await c.gw.request('GET', `/v1/dnc/${encodeURIComponent(CALLEE)}`, { key: tenant.apiKey })
    return r.body.listed === true ? r.body : undefined
  }, 15_000)
  t.match(listed, { phone_number: CALLEE, listed: true, source: 'call' })
  const cs = await waitForStatus(c, tenant, id, 'completed')
  t.match(cs.get(CALLEE), { status: 'done', disposition: 'answered', attempts: 1 })
  t.equal(dialled.get(CALLEE), 1)
  // A second campaign with the same person: refused before the carrier.
  const again = await runCampaign(c, tenant, campaignBody(tenant, { name: 'again' }), [{ phone_number: CALLEE }])
  const second = await waitForStatus(c, tenant, again, 'completed')
  t.match(second.get(CALLEE), { disposition: 'dnc', attempts: 0 })
  t.equal(dialled.get(CALLEE), 1, 'never dialled again')
})
