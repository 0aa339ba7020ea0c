/**
 * A website visitor handed to a human on the phone, in headless Chromium with the published browser SDK
 * (`@layercode/js-sdk` 2.8.10, its ESM build served as is) and Chromium's fake microphone (a speech WAV, looped):
 * the human answers (accept "none": bridged on answer) and talks for several seconds while the visitor speaks
 * (the microphone, through the bridge to the human), types (`sendClientResponseText`, which stops the SDK's player)
 * and signals speech (`vad_events`). The SDK's own player must go on taking the human's audio after each of them,
 * its played amplitude stays up, the agent hears nothing of it, and every transfer turn is announced.
 */
import { readFileSync } from 'node:fs'
import { createServer } from 'node:http'
import type { AddressInfo } from 'node:net'
import { fileURLToPath } from 'node:url'
import t from 'tap'
import { FakeCallsApi } from '../fakes/carrier/fake-calls-api.js'
import { decodeMulaw, encodeMulaw } from '../../pipeline/audio/g711-mulaw.js'
import { eventually, newBackendTenant, sse, startVoiceWorld } from '../carrier-e2e/carrier-setup.js'
import { launchChromium, skipReason } from './e2e-harness.js'

const skip = skipReason()
const HUMAN = '+14155550100'
const TOKEN = 'warm-transfer-sdk-token'
/** The package's ESM build (its `import` export). */
const SDK_JS = fileURLToPath(import.meta.resolve('@layercode/js-sdk'))

/** The page: the SDK's ESM build, started with a session the test authorized (VAD off: its model is on a CDN). */
const PAGE = `<!doctype html><meta charset="utf-8"><title>sdk</title><script type="module">
import LayercodeClient from '/sdk.js'
window.log = { messages: [], enqueued: [], amps: [] }
window.start = async (wsUrl, auth) => {
  const client = new LayercodeClient({
    agentId: 'ag_test',
    authorizeSessionEndpoint: '/authorize',
    authorizeSessionRequest: async () => new Response(JSON.stringify(auth), { status: 200, headers: { 'content-type': 'application/json' } }),
    enableVAD: false,
    onMessage: (m) => window.log.messages.push({ at: Date.now(), type: m.type, role: m.role, turn_id: m.turn_id }),
    onAgentAmplitudeChange: (a) => window.log.amps.push([Date.now(), a]),
  })
  client._websocketUrl = wsUrl
  const add = client.wavPlayer.add16BitPCM.bind(client.wavPlayer)
  client.wavPlayer.add16BitPCM = (buf, trackId) => {
    const out = add(buf, trackId)
    window.log.enqueued.push([Date.now(), trackId, out ? out.length : 0])
    return out
  }
  window.client = client
  await client.connect()
}
</script>`

/** `ms` of a tone as mu-law 8 kHz. */
function tone(hz: number, ms: number): Buffer {
  const n = (8000 * ms) / 1000
  const pcm = new Int16Array(n)
  for (let i = 0; i < n; i++) pcm[i] = Math.round(8000 * Math.sin((2 * Math.PI * hz * i) / 8000))
  return Buffer.from(encodeMulaw(pcm))
}

t.test('Chromium with the published SDK: the human plays on while the visitor speaks and types', { skip }, async (t) => {
  const { c } = await startVoiceWorld(t)
  const api = await FakeCallsApi.start({ authToken: TOKEN, stepMs: 5, rewriteUrl: c.rewrite })
  t.teardown(() => api.close())
  const { tenant, backend } = await newBackendTenant(t, c, TOKEN, (config) => {
    config.clients = { ...(config.clients as object), browser: true }
  })
  const put = await c.gw.request('PUT', `/admin/v1/organizations/${tenant.orgId}/carrier`, {
    admin: true,
    body: { account_sid: api.accountSid, auth_token: TOKEN, api_base_url: api.baseUrl },
  })
  if (put.status !== 200) throw new Error(put.text)
  backend.reply = (req) => {
    const turnId = req.json.turn_id as string
    if (req.json.type === 'session.start') {
      return {
        kind: 'sse',
        steps: [{ data: { type: 'response.transfer', turn_id: turnId, mode: 'warm', to: HUMAN, accept: 'none', timeout_s: 20 } }],
      }
    }
    return sse(turnId, 'The agent should not be heard now.')
  }
  api.outcome = { kind: 'answer', realtime: true, silenceWhenIdle: true, playbackSpeed: 1 }

  const sdkJs = readFileSync(SDK_JS)
  const site = createServer((req, res) => {
    if (req.url === '/sdk.js') res.writeHead(200, { 'content-type': 'text/javascript' }).end(sdkJs)
    else res.writeHead(200, { 'content-type': 'text/html' }).end(PAGE)
  })
  await new Promise<void>((r) => site.listen(0, '127.0.0.1', r))
  t.teardown(() => new Promise((r) => site.close(r)))
  const browser = await launchChromium()
  t.teardown(() => browser.close())
  const page = await browser.newPage()
  await page.goto(`http://127.0.0.1:${(site.address() as AddressInfo).port}/`)

  const auth = await c.gw.request('POST', '/v1/agents/web/authorize_session', { key: tenant.apiKey, body: { agent_id: tenant.agentId } })
  if (auth.status !== 200) throw new Error(auth.text)
  const dialled = api.nextCall()
  await page.evaluate(([url, body]) => (globalThis as any).start(url, body), [
    `${c.gw.url.replace(/^http/, 'ws')}/v1/agents/web/websocket`,
    auth.body,
  ] as const)
  const human = await dialled
  const leg = await eventually(async () => (human.phone?.outcome === 'connected' ? human.phone.call : undefined), 15_000)
  // The human talks for 6 s (a 1 kHz tone, in real time).
  const humanFrom = leg.receivedAudio().length
  const talking = leg.sendAudio(tone(1000, 6000))
  const now = () => page.evaluate(() => Date.now())
  await page.waitForFunction(() => (globalThis as any).log.enqueued.some((e: [number, string, number]) => e[2] > 0), undefined, {
    timeout: 10_000,
  })
  await new Promise((r) => setTimeout(r, 1000))
  const typedAt = await now()
  await page.evaluate(() => (globalThis as any).client.sendClientResponseText('Can I also ask about my order?'))
  await new Promise((r) => setTimeout(r, 1000))
  const spokeAt = await now()
  await page.evaluate(() => (globalThis as any).client._wsSend({ type: 'vad_events', event: 'vad_start' }))
  await new Promise((r) => setTimeout(r, 700))
  await page.evaluate(() => (globalThis as any).client._wsSend({ type: 'vad_events', event: 'vad_end' }))
  await talking
  await new Promise((r) => setTimeout(r, 500))
  const log = (await page.evaluate(() => (globalThis as any).log)) as {
    messages: { at: number; type: string; role?: string; turn_id?: string }[]
    enqueued: [number, string, number][]
    amps: [number, number][]
  }

  const taken = (from: number, to: number) => log.enqueued.filter(([at, , n]) => at >= from && at < to && n > 0).length
  const dropped = (from: number) => log.enqueued.filter(([at, , n]) => at >= from && n === 0).length
  t.ok(
    taken(typedAt + 300, spokeAt) >= 10,
    `after the visitor typed, the SDK's player took the human's audio again (${taken(typedAt + 300, spokeAt)} chunks)`,
  )
  t.ok(taken(spokeAt + 300, spokeAt + 2500) >= 10, `and after vad_start (${taken(spokeAt + 300, spokeAt + 2500)} chunks)`)
  t.ok(dropped(typedAt) <= 5, `at most the chunks in flight when the visitor typed were dropped (${dropped(typedAt)})`)
  const loud = log.amps.filter(([at, a]) => at > typedAt + 500 && at < spokeAt && a > 0.05).length
  t.ok(loud >= 3, `the player was audible after the visitor typed (${loud} loud amplitude samples)`)
  t.notOk(
    log.messages.some((m) => m.type === 'turn.start' && m.role === 'user'),
    'no user turn was announced during the bridge',
  )
  const starts = log.messages.filter((m) => m.type === 'turn.start' && m.role === 'assistant').map((m) => m.turn_id)
  const tracks = new Set(log.enqueued.map(([, id]) => id))
  t.ok(
    [...tracks].every((id) => starts.includes(id)),
    `every track the player got was announced by turn.start (${[...tracks].join(', ')})`,
  )
  t.notOk(
    backend.requests.some((r) => r.json.type === 'message'),
    'the typed line did not reach the agent',
  )
  // The visitor's microphone (speech, looped) reached the human through the bridge.
  const heard = leg.receivedAudio().subarray(humanFrom)
  const pcm = decodeMulaw(heard, new Int16Array(heard.length))
  let energy = 0
  for (const s of pcm) energy += s * s
  t.ok(heard.length > 8000 * 3 && Math.sqrt(energy / Math.max(1, pcm.length)) > 100, "the visitor's microphone reached the human")
  await leg.hangup()
})
