/**
 * Shared setup of the carrier end-to-end tests: a real gateway whose PUBLIC_URL is a public https name (as
 * behind a TLS-terminating proxy), the simulator's URL rewriting to reach it, and organizations with an
 * agent, an assigned number and (optionally) carrier credentials pointing at a fake Calls API.
 */
import t from 'tap'
import type { CarrierOptions, GatewayDeps } from '../../server/gateway-deps.js'
import { startTestGateway, type TestGateway } from '../helpers/gateway.js'
import type { TestDb } from '../helpers/db.js'
import { sql, type Kysely } from 'kysely'
import type { Database } from '../../gateway/store/schema.js'
import type { FakeCallsApi } from '../fakes/carrier/fake-calls-api.js'
import { newCallSid, placeCall, type PlaceCallOptions, type PlaceCallResult } from '../fakes/carrier/phone-simulator.js'
import { takeProtocolViolations } from '../fakes/carrier/simulated-call.js'
import { startFakeDeepgram, transcriptsInTurn, type FakeDeepgramConnection } from '../fakes/deepgram/fake-deepgram.js'
import type { FakeWsServer } from '../fakes/deepgram/fake-ws-server.js'
import { startFakeElevenLabs, type FakeElevenLabsConnection } from '../fakes/elevenlabs/fake-elevenlabs.js'
import { startFakeBackend, type BackendReply, type FakeBackend } from '../fakes/backend/fake-backend.js'
import { encodeMulaw } from '../../pipeline/audio/g711-mulaw.js'
import { loadFixture } from '../fixtures/audio/signals.js'
import { eventually } from '../helpers/eventually.js'

// Every file that sets up the carrier world checks, after each of its tests, that no simulated phone saw the gateway
// break the media stream protocol (the file fails, naming the test, the call and the violation).
t.afterEach((test) => {
  const violations = takeProtocolViolations()
  if (violations.length > 0) t.fail(`${test.name}: the gateway broke the media stream protocol`, { found: violations })
})

/** What the carrier believes the gateway's address is. */
export const PUBLIC_URL = 'https://voice.example.test'

/** A gateway reachable at PUBLIC_URL through `rewrite`. */
export interface CarrierGw {
  gw: TestGateway
  /** Maps public (https/wss) URLs to the gateway's real address. */
  rewrite: (url: string) => string
  hookUrl: string
  statusUrl: string
}

/** Starts a gateway for carrier tests; `carrier` tunes its carrier path (deadlines); `db` is its database. */
export async function startCarrierGateway(
  env: Record<string, string> = {},
  carrier?: CarrierOptions,
  db?: TestDb,
  campaigns?: GatewayDeps['campaigns'],
  sessionOverrides?: { minuteMs?: number },
): Promise<CarrierGw> {
  const gw = await startTestGateway(
    { PUBLIC_URL, ...env },
    { deps: { carrier, campaigns, sessionOverrides }, ...(db !== undefined && { db }) },
  )
  const wsBase = gw.url.replace(/^http/, 'ws')
  const rewrite = (url: string) => url.replace(PUBLIC_URL, gw.url).replace(PUBLIC_URL.replace(/^https/, 'wss'), wsBase)
  return { gw, rewrite, hookUrl: `${PUBLIC_URL}/v1/agents/carrier/twiml`, statusUrl: `${PUBLIC_URL}/v1/agents/carrier/status` }
}

let numberSeq = 0
/** A fresh valid US number for this process. */
export function newNumber(): string {
  numberSeq += 1
  const n = (process.pid * 37 + numberSeq * 7919) % 10_000
  return `+1415555${String(n).padStart(4, '0')}`
}

/** One organization with an agent and a number assigned to it. */
export interface CarrierTenant {
  orgId: string
  apiKey: string
  agentId: string
  webhookSecret: string
  number: string
  authToken: string | undefined
}

/** Creates an organization, an agent (optionally with config changes) and assigns it a new number. */
export async function newTenant(
  c: CarrierGw,
  opts: {
    limit?: number | null
    balance?: number | null
    /** Store carrier credentials: a token (and a fake Calls API for outbound). */
    carrier?: { authToken: string; accountSid?: string; api?: FakeCallsApi } | undefined
    config?: (config: any) => any
    /** Agent template (default: the recommended one). */
    template?: string
  } = {},
): Promise<CarrierTenant> {
  const org = await c.gw.request('POST', '/admin/v1/organizations', {
    admin: true,
    body: {
      name: `carrier-${numberSeq}`,
      ...(opts.limit !== undefined && { max_concurrent_sessions: opts.limit }),
      ...(opts.balance !== undefined && { balance: opts.balance }),
    },
  })
  if (org.status !== 201) throw new Error(org.text)
  const apiKey = org.body.api_key as string
  const agent = await c.gw.request('POST', '/v1/agents', { key: apiKey, body: opts.template ? { template_id: opts.template } : {} })
  if (agent.status !== 201) throw new Error(agent.text)
  if (opts.config) {
    const r = await c.gw.request('POST', `/v1/agents/${agent.body.id}`, {
      key: apiKey,
      body: { config: opts.config(structuredClone(agent.body.config)) },
    })
    if (r.status !== 200) throw new Error(r.text)
  }
  const number = newNumber()
  // The operator gives the organization the number (a carrier number is claimable this way or through its account).
  const reserved = await c.gw.request('PUT', `/admin/v1/organizations/${org.body.id}/phone_numbers/${encodeURIComponent(number)}`, {
    admin: true,
  })
  if (reserved.status !== 201) throw new Error(reserved.text)
  const assigned = await c.gw.request('POST', `/v1/agents/${agent.body.id}/phone_numbers`, { key: apiKey, body: { phone_number: number } })
  if (assigned.status !== 201) throw new Error(assigned.text)
  if (opts.carrier) {
    const r = await c.gw.request('PUT', `/admin/v1/organizations/${org.body.id}/carrier`, {
      admin: true,
      body: {
        account_sid: opts.carrier.api?.accountSid ?? opts.carrier.accountSid ?? `AC${'1'.repeat(32)}`,
        auth_token: opts.carrier.api?.authToken ?? opts.carrier.authToken,
        ...(opts.carrier.api && { api_base_url: opts.carrier.api.baseUrl }),
      },
    })
    if (r.status !== 200) throw new Error(r.text)
  }
  return {
    orgId: org.body.id,
    apiKey,
    agentId: agent.body.id,
    webhookSecret: agent.body.webhook_secret,
    number,
    authToken: opts.carrier?.api?.authToken ?? opts.carrier?.authToken,
  }
}

/** Places an inbound call to the tenant's number through the simulator. */
export function callTenant(c: CarrierGw, tenant: CarrierTenant, opts: Partial<PlaceCallOptions> = {}): Promise<PlaceCallResult> {
  return placeCall({
    voiceHookUrl: c.rewrite(c.hookUrl),
    publicUrl: c.hookUrl,
    ...(tenant.authToken !== undefined && { authToken: tenant.authToken }),
    from: '+442071838750',
    to: tenant.number,
    rewriteUrl: c.rewrite,
    realtime: false,
    ...opts,
  })
}

export { eventually }

/** The session row of a call sid (newest). */
export async function sessionOfCall(c: CarrierGw, callSid: string) {
  return c.gw.store.db.selectFrom('sessions').selectAll().where('call_sid', '=', callSid).orderBy('created_at', 'desc').executeTakeFirst()
}

/**
 * A real-time phone call to `tenant` (1x playback, silence sent between phrases, as a phone does) that connected,
 * and the session row it made.
 */
export async function startRealtimeCall(c: CarrierGw, tenant: CarrierTenant) {
  const callSid = newCallSid()
  const r = await callTenant(c, tenant, { callSid, realtime: true, silenceWhenIdle: true, playbackSpeed: 1 })
  if (r.outcome !== 'connected') throw new Error(`call not connected: ${JSON.stringify(r)}`)
  const row = await eventually(async () => sessionOfCall(c, callSid))
  return { call: r.call, callSid, row }
}

/**
 * The test card (4111 1111 1111 1111)'s digits inside a string value (a transcript, a log message), for checks that
 * nothing of it was stored or logged: a number such as `duration_ms: 14111` is no card.
 */
export const CARD_DIGITS = /"[^"]*(?:4111|1111)[^"]*"/

/** The phone end of a connected call. */
export type RealtimeCall = Awaited<ReturnType<typeof startRealtimeCall>>['call']

/** Waits until everything the agent sent has played (marks echoed), after at least `marks` marks. */
export async function heardAll(call: RealtimeCall, marks = 1): Promise<void> {
  await eventually(async () => (call.marks.length >= marks && call.earpiece.pendingMarks().length === 0 ? true : undefined), 20_000)
}

/** A carrier gateway wired to an STT and a TTS vendor fake: the world of the voice-call tests. */
export interface VoiceWorld {
  c: CarrierGw
  deepgram: FakeWsServer<FakeDeepgramConnection>
  elevenlabs: FakeWsServer<FakeElevenLabsConnection>
  /**
   * What the STT fake says next: each Finalize moves to the next entry (an empty transcript when none is left).
   * Tests script a call by replacing its contents.
   */
  transcripts: string[]
}

/** Starts the vendor fakes and a gateway using them (`env` adds to its environment); all close at `t`'s teardown. */
export async function startVoiceWorld(
  t: { teardown(fn: () => unknown): void },
  env: Record<string, string> = {},
  carrier?: CarrierOptions,
  sessionOverrides?: { minuteMs?: number },
): Promise<VoiceWorld> {
  const transcripts: string[] = []
  const deepgram = await startFakeDeepgram({ apiKey: 'dg-key', script: transcriptsInTurn(transcripts) })
  t.teardown(() => deepgram.close())
  const elevenlabs = await startFakeElevenLabs({ apiKey: 'el-key', msPerChar: 20, chunkMs: 100, chunkIntervalMs: 0 })
  t.teardown(() => elevenlabs.close())
  const c = await startCarrierGateway(
    {
      STT_VENDOR_A_URL: deepgram.url,
      STT_VENDOR_A_API_KEY: 'dg-key',
      TTS_VENDOR_A_URL: elevenlabs.url,
      TTS_VENDOR_A_API_KEY: 'el-key',
      ...env,
    },
    carrier,
    undefined,
    undefined,
    sessionOverrides,
  )
  t.teardown(() => c.gw.close())
  return { c, deepgram, elevenlabs, transcripts }
}

/**
 * A tenant whose agent (the webhook template) posts every turn to a fake customer backend, recognises English with
 * nova-3 and ends a turn 800 ms after the last final: the phone-call tests' usual agent. `edit` changes the config
 * further before it is saved.
 */
export async function newBackendTenant(
  t: { teardown(fn: () => unknown): void },
  c: CarrierGw,
  authToken: string,
  edit: (config: any) => void = () => undefined,
  /** A fake Calls API the organization's carrier credentials point at (for outbound calls and transfer legs). */
  api?: FakeCallsApi,
): Promise<{ tenant: CarrierTenant; backend: FakeBackend }> {
  const tenant = await newTenant(c, { template: 'voice-agent-webhook', carrier: { authToken, api } })
  const backend = await startFakeBackend({ secret: tenant.webhookSecret })
  t.teardown(() => backend.close())
  const agent = (await c.gw.request('GET', `/v1/agents/${tenant.agentId}`, { key: tenant.apiKey })).body
  const config = structuredClone(agent.config)
  config.plugins = config.plugins.map((p: { use: string; options: Record<string, unknown> }) => {
    if (p.use === 'agent.webhook') return { ...p, options: { ...p.options, url: backend.url } }
    if (p.use === 'stt.vendor_a') return { use: 'stt.vendor_a', options: { model_id: 'nova-3', language: 'en' } }
    if (p.use === 'turn_manager') return { ...p, options: { ...p.options, base_timeout_ms: 800 } }
    return p
  })
  edit(config)
  const r = await c.gw.request('POST', `/v1/agents/${tenant.agentId}`, { key: tenant.apiKey, body: { config } })
  if (r.status !== 200) throw new Error(r.text)
  return { tenant, backend }
}

/**
 * A connected real-time call (4x playback) whose caller will say the two phrases of `two-phrases.wav` ('what are
 * your opening hours', 'and on sundays') to an agent that greets with 'Hello.' and answers each with 'We open at
 * nine.'; with its call sid and session row.
 */
export async function connectTwoTurnCall(c: CarrierGw, tenant: CarrierTenant, backend: FakeBackend, transcripts: string[]) {
  const callSid = newCallSid()
  transcripts.length = 0
  transcripts.push('what are your opening hours', 'and on sundays')
  backend.reply = (req) => sse(req.json.turn_id, req.json.type === 'session.start' ? 'Hello.' : 'We open at nine.')
  const r = await callTenant(c, tenant, { callSid, realtime: true, silenceWhenIdle: true, playbackSpeed: 4 })
  if (r.outcome !== 'connected') throw new Error(`call not connected: ${JSON.stringify(r)}`)
  const row = await eventually(async () => sessionOfCall(c, callSid))
  return { callSid, call: r.call, row }
}

/** A backend reply streamed as SSE: each text a `response.tts` for `turnId`, then `response.end`. */
export function sse(turnId: string, ...texts: string[]): BackendReply {
  return {
    kind: 'sse',
    steps: [
      ...texts.map((content) => ({ data: { type: 'response.tts', content, turn_id: turnId } })),
      { data: { type: 'response.end', turn_id: turnId } },
    ],
  }
}

/** The caller's speech (a fixture), then silence so turn taking can see the end. */
export function speech(fixture: string, silenceMs = 1500): Buffer {
  const f = loadFixture(fixture)
  return Buffer.concat([Buffer.from(encodeMulaw(f.samples)), Buffer.alloc((silenceMs / 1000) * 8000, 0xff)])
}

/** Per session of `ids`: how many turns with both a user and an assistant message are stored. */
export function finishedTurnsOf(db: Kysely<Database>, ids: string[]) {
  return db
    .selectFrom('transcript_entries')
    .select(['session_id', sql<number>`count(*)::int`.as('n')])
    .where('session_id', 'in', ids)
    .where('user_message', 'is not', null)
    .where('assistant_message', 'is not', null)
    .groupBy('session_id')
    .execute()
}
