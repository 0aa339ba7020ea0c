import { z } from 'zod'
import { createAgentSchema, updateAgentSchema } from '../routes/agents.js'
import { phoneNumberSchema } from '../routes/agent-phone-numbers.js'
import { authorizeSchema } from '../routes/sessions.js'
import { sessionListQuery } from '../routes/session-list-query.js'
import { dailyStatsQuery } from '../routes/session-list.js'
import { createLinkSchema, linkAuthorizeSchema } from '../routes/agent-links.js'
import { outboundCallSchema } from '../routes/outbound-calls.js'
import { MACHINE_DETECTION_PATH, STATUS_CALLBACK_PATH, VOICE_HOOK_PATH } from '../routes/carrier-hooks.js'
import { TUNNEL_REQUEST_ROUTE } from '../routes/tunnel-requests.js'
import { configOverrideSchema, pipelineConfigSchema } from '../../pipeline/index.js'
import { V1, type Operation } from './operation.js'
import { ADMIN_OPERATIONS } from './admin-operations.js'
import { ACCOUNT_OPERATIONS } from './account-operations.js'

// The agent `config` and the per-session override are validated by the pipeline's schemas, not the route's own;
// the reference shows those (with the strict URL policy production runs with).
const POLICY = { allowInsecureLoopback: false }
const updateAgentBody = updateAgentSchema.extend({ config: pipelineConfigSchema(POLICY).optional() })
const authorizeBody = authorizeSchema.extend({ config: configOverrideSchema(POLICY).optional() })

/** The carrier's voice hook fields the SPEC names (form-encoded; other fields the carrier sends are ignored). */
const voiceHookForm = z.object({
  Direction: z.string(),
  From: z.string(),
  To: z.string(),
  FromCountry: z.string().optional(),
  ToCountry: z.string().optional(),
  CallSid: z.string().optional(),
})
const statusCallbackForm = z.object({ CallSid: z.string(), CallStatus: z.string() })
const machineDetectionForm = z.object({ CallSid: z.string(), AnsweredBy: z.string(), MachineDetectionDuration: z.string().optional() })

/** Every HTTP operation of the gateway. A test fails when a registered route is missing here. */
export const OPERATIONS: Operation[] = [
  {
    method: 'get',
    path: '/healthz',
    tag: 'health',
    summary: 'The process is up',
    auth: 'none',
    ok: { status: 200, description: '`{ status: "ok" }`' },
  },
  {
    method: 'get',
    path: '/readyz',
    tag: 'health',
    summary: 'The database answers and the gateway takes sessions',
    auth: 'none',
    ok: { status: 200, description: '`{ status: "ready", database }`' },
    errors: [503],
  },
  {
    method: 'get',
    path: '/metrics',
    tag: 'observability',
    summary: 'Prometheus metrics (text exposition format); under serve --workers, every worker aggregated',
    auth: 'metrics',
    ok: { status: 200, description: 'Prometheus text format', contentType: 'text/plain' },
    errors: [401, 503],
  },
  {
    method: 'get',
    path: '/openapi.json',
    tag: 'observability',
    summary: 'This document',
    auth: 'none',
    ok: { status: 200, description: 'OpenAPI 3.1 document' },
  },
  {
    method: 'get',
    path: '/docs',
    tag: 'observability',
    summary: 'The API reference page',
    auth: 'none',
    ok: { status: 200, description: 'HTML page', contentType: 'text/html' },
  },
  {
    method: 'get',
    path: '/docs/:file',
    tag: 'observability',
    summary: "The reference page's scripts and styles (served from the installed package, no CDN)",
    auth: 'none',
    ok: { status: 200, description: 'a static file', contentType: 'application/octet-stream' },
    errors: [404],
  },
  ...ADMIN_OPERATIONS,
  ...ACCOUNT_OPERATIONS,
  {
    method: 'post',
    path: TUNNEL_REQUEST_ROUTE,
    tag: 'tunnels',
    summary:
      "A tunnel address (an addition to the SPEC): while `voxgate tunnel` runs, the agent's webhook URL points here; the request " +
      "is relayed to the developer's machine (rest = the local path) and the response streamed back. The local server " +
      'checks service-signature. The tunnel itself is a WebSocket: GET /v1/tunnels?agent_id=&path=&tail= with the API key.',
    auth: 'webhook_signature',
    body: z.unknown(),
    ok: {
      status: 200,
      description: "the local server's response, relayed as it streams (an SSE reply event by event)",
      contentType: 'text/event-stream',
    },
    errors: [413, 502, 503],
  },
  {
    method: 'post',
    path: VOICE_HOOK_PATH,
    tag: 'carrier',
    summary: "The carrier's voice webhook: answers with markup that connects the media stream (or refuses the call)",
    auth: 'carrier_signature',
    body: voiceHookForm,
    bodyType: 'form',
    ok: { status: 200, description: 'carrier voice markup', contentType: 'text/xml' },
    errors: [400, 403, 503],
  },
  {
    method: 'post',
    path: STATUS_CALLBACK_PATH,
    tag: 'carrier',
    summary: "The carrier's call status callback",
    auth: 'carrier_signature',
    body: statusCallbackForm,
    bodyType: 'form',
    ok: { status: 204, description: 'accepted' },
    errors: [400, 403],
  },
  {
    method: 'post',
    path: MACHINE_DETECTION_PATH,
    tag: 'carrier',
    summary: "The carrier's asynchronous answering machine detection callback (an addition to the SPEC)",
    auth: 'carrier_signature',
    body: machineDetectionForm,
    bodyType: 'form',
    ok: { status: 204, description: 'accepted' },
    errors: [400, 403],
  },
  {
    method: 'post',
    path: '/v1/agents/web/authorize_session',
    tag: 'sessions',
    summary: 'Authorize a browser session (from the customer backend)',
    auth: 'api_key',
    body: authorizeBody,
    ok: { status: 200, description: '`{ client_session_key, conversation_id, config }`' },
    errors: [400, 402, 429],
  },
  {
    method: 'post',
    path: '/v1/agent_links/authorize_session',
    tag: 'sessions',
    summary: "Authorize a browser session with an agent link's token (an addition: the demo link)",
    auth: 'agent_link',
    body: linkAuthorizeSchema,
    ok: { status: 200, description: '`{ client_session_key, conversation_id, config }`' },
    errors: [400, 401, 402, 429],
  },
  {
    method: 'post',
    path: '/v1/agents/:agent_id/links',
    tag: 'agents',
    summary: 'Create an agent link (an addition); its URL, with the token, is shown once',
    auth: 'api_key',
    body: createLinkSchema,
    ok: { status: 201, description: '`{ id, agent_id, created_at, revoked_at, url }`' },
    errors: [...V1, 409, 429],
  },
  {
    method: 'get',
    path: '/v1/agents/:agent_id/links',
    tag: 'agents',
    summary: "An agent's links, without their tokens (an addition)",
    auth: 'api_key',
    ok: { status: 200, description: '`{ links: [{ id, agent_id, created_at, revoked_at }] }`' },
    errors: V1,
  },
  {
    method: 'delete',
    path: '/v1/agents/:agent_id/links/:link_id',
    tag: 'agents',
    summary: 'Revoke an agent link (an addition); live sessions go on',
    auth: 'api_key',
    ok: { status: 200, description: 'the link, with `revoked_at`' },
    errors: V1,
  },
  {
    method: 'get',
    path: '/v1/agents/:agent_id/sessions/:session_id',
    tag: 'sessions',
    summary: 'Session details, with each transcript entry’s latency breakdown',
    auth: 'api_key',
    ok: { status: 200, description: 'session details', schemaRef: 'SessionDetails' },
    errors: V1,
  },
  {
    method: 'get',
    path: '/v1/sessions',
    tag: 'sessions',
    summary:
      "The organization's sessions, newest first by start (creation for a call that never connected), then id (an addition, for the console): search, outcome filters and cursor paging; every criterion given must hold",
    auth: 'api_key',
    query: sessionListQuery,
    ok: { status: 200, description: 'a page of sessions and the cursor of the next (null on the last page)', schemaRef: 'SessionList' },
    errors: [400],
  },
  {
    method: 'get',
    path: '/v1/stats/daily',
    tag: 'sessions',
    summary: 'Minutes per UTC day and turn latency percentiles (p50, p90, p99) per day (an addition)',
    auth: 'api_key',
    query: dailyStatsQuery,
    ok: {
      status: 200,
      description: '`{ days: [{ date, sessions, minutes, turns, latency_p50_ms, latency_p90_ms, latency_p99_ms }] }`',
      schemaRef: 'DailyStatsList',
    },
    errors: [400],
  },
  {
    method: 'get',
    path: '/v1/agents/:agent_id/sessions/:session_id/webhook_deliveries',
    tag: 'sessions',
    summary: "The session's lifecycle webhook deliveries (an addition): status, attempts, response code, times",
    auth: 'api_key',
    ok: {
      status: 200,
      description:
        '`{ deliveries: [{ id, session_id, type, url, status, attempts, response_status, error, created_at, last_attempt_at }] }`',
      schemaRef: 'WebhookDeliveryList',
    },
    errors: V1,
  },
  {
    method: 'post',
    path: '/v1/agents/:agent_id/sessions/:session_id/webhook_deliveries/:delivery_id/redeliver',
    tag: 'sessions',
    summary: 'Send a failed lifecycle webhook again (an addition): one attempt, same body, signed now, to the current session webhook URL',
    auth: 'api_key',
    ok: { status: 200, description: 'the delivery with the outcome of this attempt (`status` delivered or failed)' },
    errors: [...V1, 409],
  },
  {
    method: 'post',
    path: '/v1/agents/:agent_id/sessions/:session_id/end',
    tag: 'sessions',
    summary: 'End a connected session wherever it runs (an addition): hangs up a call, closes a browser session',
    auth: 'api_key',
    ok: { status: 202, description: '`{ session_id, end_requested: true }`; `session.end` follows as usual' },
    errors: [400, 404, 409],
  },
  {
    method: 'get',
    path: '/v1/agents/:agent_id/sessions/:session_id/recording',
    tag: 'sessions',
    summary: 'The session recording: a two-channel WAV (caller left, agent right); `?channels=mono` mixes down; byte ranges',
    auth: 'api_key',
    ok: {
      status: 200,
      description:
        'the WAV (206 for a byte range); with an object store (RECORDING_S3_BUCKET) a finished recording that moved there answers 302 to a short-lived presigned URL instead',
      contentType: 'audio/wav',
    },
    errors: [400, 404, 409, 416, 503],
  },
  {
    method: 'delete',
    path: '/v1/agents/:agent_id/sessions/:session_id/recording',
    tag: 'sessions',
    summary: 'Delete the session recording (an addition); its object store files go first',
    auth: 'api_key',
    ok: { status: 204, description: 'deleted' },
    errors: [...V1, 503],
  },
  {
    method: 'post',
    path: '/v1/agents/:agent_id/calls/initiate_outbound',
    tag: 'calls',
    summary: "Place an outbound call from one of the agent's numbers",
    auth: 'api_key',
    body: outboundCallSchema,
    ok: { status: 200, description: '`{ conversation_id, session_id, call_sid }`' },
    errors: [400, 402, 429, 502, 503, 504],
  },
  {
    method: 'get',
    path: '/v1/agents',
    tag: 'agents',
    summary: "The organization's agents",
    auth: 'api_key',
    ok: { status: 200, description: '`{ agents }`', schemaRef: 'AgentList' },
    errors: [400],
  },
  {
    method: 'post',
    path: '/v1/agents',
    tag: 'agents',
    summary: 'Create an agent from a template',
    auth: 'api_key',
    body: createAgentSchema,
    ok: { status: 201, description: 'the agent, with `config` and `webhook_secret`' },
    errors: [...V1, 409, 429],
  },
  {
    method: 'get',
    path: '/v1/agents/:agent_id',
    tag: 'agents',
    summary: 'An agent',
    auth: 'api_key',
    ok: { status: 200, description: 'the agent', schemaRef: 'Agent' },
    errors: V1,
  },
  {
    method: 'post',
    path: '/v1/agents/:agent_id',
    tag: 'agents',
    summary: 'Update an agent (name, webhook URL, configuration)',
    auth: 'api_key',
    body: updateAgentBody,
    ok: { status: 200, description: 'the agent' },
    errors: V1,
  },
  {
    method: 'post',
    path: '/v1/agents/:agent_id/phone_numbers',
    tag: 'agents',
    summary:
      "Assign a phone number to the agent: one the organization's carrier account owns (the carrier is asked; its sid and " +
      'friendly name fill those left out) or one the operator reserved for the organization. Any other number is 404 ' +
      '`phone_number_not_available`, whether free or held by another organization; 409: another agent of the ' +
      'organization holds it; 502: the carrier could not be asked',
    auth: 'api_key',
    body: phoneNumberSchema,
    ok: { status: 201, description: 'the assignment' },
    errors: [...V1, 409, 429, 502],
  },
  {
    method: 'delete',
    path: '/v1/agents/:agent_id/phone_numbers/:phone_number',
    tag: 'agents',
    summary: 'Unassign a phone number',
    auth: 'api_key',
    ok: { status: 204, description: 'unassigned' },
    errors: V1,
  },
]
