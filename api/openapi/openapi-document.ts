import { z } from 'zod'
import { LATENCY_STAGES } from '../../pipeline/index.js'
import { END_REASONS } from '../../core/end-reason.js'
import { OPERATIONS } from './operations.js'
import type { Auth, Operation } from './operation.js'
import { PRIVACY_OPERATIONS } from './privacy-operations.js'
import { SIP_OPERATIONS } from './sip-operations.js'
import { CAMPAIGN_OPERATIONS } from './campaign-operations.js'
import { responseSchemas } from './response-schemas.js'

type Json = Record<string, unknown>

/** The SPEC's error body, as every failing route answers (core/errors.ts). */
const ERROR_SCHEMA: Json = {
  type: 'object',
  required: ['error'],
  properties: {
    error: { type: 'string', description: 'safe message' },
    code: { type: 'string', description: 'stable code from the error registry' },
    details: { type: 'array', items: { type: 'string' }, description: 'every validation problem, each naming its field' },
  },
}

/** `latency_breakdown` (an addition to the SPEC): the stages of a turn's latency_ms. */
const LATENCY_BREAKDOWN_SCHEMA: Json = {
  type: ['object', 'null'],
  description: "Ordered stages from the end of the user's speech; the duration_ms add up to the turn's latency_ms",
  required: ['stages'],
  properties: {
    stages: {
      type: 'array',
      items: {
        type: 'object',
        required: ['name', 'at_ms', 'duration_ms'],
        properties: {
          name: { type: 'string', enum: [...LATENCY_STAGES] },
          at_ms: { type: 'number', description: "ms after the end of the user's speech" },
          duration_ms: { type: 'number', description: 'ms after the stage before' },
        },
      },
    },
  },
}

const nullable = (type: string): Json => ({ type: [type, 'null'] })

/** `failure` (an addition to the SPEC): why a turn failed and what the caller heard instead; null for a good turn. */
const TURN_FAILURE_SCHEMA: Json = {
  type: ['object', 'null'],
  description: "Why the turn failed and what the caller heard instead of the agent's reply; null for a good turn",
  required: ['cause', 'waited_ms', 'heard', 'detail'],
  properties: {
    cause: {
      type: 'string',
      description:
        'http_<status> (http_500), timeout, connect_refused, connect_failed, invalid_stream, stream_broken, empty_reply, ' +
        "backend_error (the backend sent response.error), tts_failed, stt_failed (the speech recognizer lost the caller's words)",
      pattern:
        '^(http_[0-9]{3}|timeout|connect_refused|connect_failed|invalid_stream|stream_broken|empty_reply|backend_error|tts_failed|stt_failed)$',
    },
    waited_ms: { type: 'number', description: "ms from the end of the caller's turn to the first audio the caller heard in the turn" },
    heard: { ...nullable('string'), description: 'the fallback text spoken instead, or null' },
    detail: { ...nullable('string'), description: 'one short line on what went wrong (at most 200 characters)' },
  },
}

/** gateway/sessions/session-details.ts: every field is always there but `recording_url` (a completed recording's). */
const SESSION_DETAILS_SCHEMA: Json = {
  type: 'object',
  required: [
    'session_id',
    'agent_id',
    'conversation_id',
    'status',
    'started_at',
    'ended_at',
    'duration_ms',
    'metadata',
    'from_phone_number',
    'from_phone_country',
    'to_phone_number',
    'to_phone_country',
    'ip_address',
    'country_code',
    'transcription_duration_seconds',
    'tts_duration_seconds',
    'latency_ms',
    'transcript',
    'recording_status',
    'end_reason',
    'call_status',
    'transferred_to',
    'transfers',
    'answered_by',
  ],
  properties: {
    session_id: { type: 'string' },
    agent_id: { type: 'string' },
    conversation_id: { type: 'string' },
    status: { type: 'string', enum: ['authorized', 'connected', 'ended'] },
    started_at: nullable('string'),
    ended_at: nullable('string'),
    duration_ms: nullable('number'),
    metadata: { type: 'object' },
    from_phone_number: nullable('string'),
    from_phone_country: nullable('string'),
    to_phone_number: nullable('string'),
    to_phone_country: nullable('string'),
    ip_address: nullable('string'),
    country_code: nullable('string'),
    transcription_duration_seconds: nullable('number'),
    tts_duration_seconds: nullable('number'),
    latency_ms: { ...nullable('number'), description: 'mean turn latency' },
    transcript: {
      type: 'array',
      items: {
        type: 'object',
        required: ['timestamp', 'user_message', 'assistant_message', 'latency_ms', 'latency_breakdown', 'failure', 'turn_end'],
        properties: {
          timestamp: { type: 'string' },
          user_message: nullable('string'),
          assistant_message: nullable('string'),
          latency_ms: nullable('number'),
          latency_breakdown: { $ref: '#/components/schemas/LatencyBreakdown' },
          failure: { $ref: '#/components/schemas/TurnFailure' },
          turn_end: {
            ...nullable('string'),
            description:
              'Why the caller turn ended when it did (an addition): complete_answer, complete_number, base_timeout, vendor_end_of_turn, typed, or extended: <why> (incomplete_number, awaiting_number, open_number, trailing_conjunction, filler, open_list, spelling, incomplete_date)',
          },
        },
      },
    },
    recording_status: { type: 'string', enum: ['not_available', 'in_progress', 'completed'] },
    recording_url: { type: 'string' },
    end_reason: nullable('string'),
    call_status: nullable('string'),
    transferred_to: nullable('string'),
    transfers: {
      type: 'array',
      description: 'Warm transfers of the session (an addition), one per attempt: times in ms since it started.',
      items: {
        type: 'object',
        required: ['mode', 'to', 'started_at'],
        properties: {
          mode: { type: 'string', enum: ['warm'] },
          to: { type: 'string' },
          started_at: { type: 'string', format: 'date-time' },
          answered_after_ms: { type: 'number' },
          connected_after_ms: { type: 'number' },
          failed_after_ms: { type: 'number' },
          failed_reason: { type: 'string' },
          failed_in: { type: 'string' },
          transcript: {
            type: 'array',
            description: 'What each party said while bridged, when the transfer asked to transcribe (redacted).',
            items: {
              type: 'object',
              required: ['speaker', 'text', 'at_ms'],
              properties: { speaker: { type: 'string', enum: ['caller', 'human'] }, text: { type: 'string' }, at_ms: { type: 'number' } },
            },
          },
        },
      },
    },
    answered_by: nullable('string'),
  },
}

/** One row of GET /v1/sessions. */
const SESSION_LIST_ITEM_SCHEMA: Json = {
  type: 'object',
  required: ['session_id', 'agent_id', 'agent_name', 'conversation_id', 'channel', 'status', 'turns', 'failed_turns', 'recording_status'],
  properties: {
    session_id: { type: 'string' },
    agent_id: { type: 'string' },
    agent_name: { type: 'string' },
    conversation_id: { type: 'string' },
    channel: { type: 'string', enum: ['browser', 'carrier', 'sip'] },
    direction: nullable('string'),
    status: { type: 'string', enum: ['connected', 'ended'] },
    from_phone_number: nullable('string'),
    to_phone_number: nullable('string'),
    started_at: nullable('string'),
    ended_at: nullable('string'),
    duration_ms: nullable('number'),
    turns: { type: 'integer', description: 'transcript entries stored so far' },
    failed_turns: { type: 'integer', description: 'turns with a failure (see TurnFailure)' },
    latency_ms: { ...nullable('number'), description: 'mean turn latency' },
    end_reason: { ...nullable('string'), enum: [...END_REASONS, null] },
    recording_status: { type: 'string' },
  },
}

/** The answer of GET /v1/sessions: a page, and where the next one starts. */
const SESSION_LIST_SCHEMA: Json = {
  type: 'object',
  required: ['sessions', 'next_cursor'],
  properties: {
    sessions: { type: 'array', items: SESSION_LIST_ITEM_SCHEMA },
    next_cursor: {
      ...nullable('string'),
      description: 'opaque: pass it as `cursor`, with the same filters, for the next page; null on the last page',
    },
  },
}

const SECURITY: Record<Auth, Json[] | undefined> = {
  api_key: [{ apiKey: [] }],
  admin: [{ adminToken: [] }],
  api_key_or_admin: [{ apiKey: [] }, { adminToken: [] }],
  metrics: [{ metricsToken: [] }],
  carrier_signature: [{ carrierSignature: [] }, { twilioSignature: [] }],
  agent_link: [{ agentLink: [] }],
  webhook_signature: [{ webhookSignature: [] }],
  none: [],
}

/** A request body's JSON Schema, as zod itself derives it from the route's schema (input side). */
function bodySchema(schema: z.ZodType): Json {
  const { $schema: _, ...json } = z.toJSONSchema(schema, { io: 'input', unrepresentable: 'any' }) as Json
  return json
}

/** `/v1/agents/:agent_id` -> `/v1/agents/{agent_id}`; a wildcard `{*rest}` (the rest of the path) -> `{rest}`. */
export function openApiPath(koaPath: string): string {
  return koaPath.replace(/\{\*([A-Za-z0-9_]+)\}/g, '{$1}').replace(/:([A-Za-z0-9_]+)/g, '{$1}')
}

/**
 * A query schema's parameters, each with the JSON Schema zod derives for it (input side: what the client sends).
 * Every query parameter is optional; one left out takes its default.
 */
function queryParameters(schema: z.ZodType): Json[] {
  const json = bodySchema(schema) as { properties?: Record<string, Json> }
  return Object.entries(json.properties ?? {}).map(([name, property]) => {
    const { description, ...rest } = property
    return { name, in: 'query', required: false, ...(description !== undefined && { description }), schema: rest }
  })
}

function operationObject(op: Operation): Json {
  const params: Json[] = [...op.path.matchAll(/:([A-Za-z0-9_]+)|\{\*([A-Za-z0-9_]+)\}/g)].map((m) => ({
    name: m[1] ?? m[2],
    in: 'path',
    required: true,
    schema: { type: 'string' },
  }))
  if (op.query !== undefined) params.push(...queryParameters(op.query))
  const ok = op.ok
  const okContent = ok.status === 204 ? undefined : ok.schemaRef !== undefined ? { $ref: `#/components/schemas/${ok.schemaRef}` } : {}
  const responses: Json = {
    [ok.status]: {
      description: ok.description,
      ...(okContent !== undefined && { content: { [ok.contentType ?? 'application/json']: { schema: okContent } } }),
    },
  }
  for (const status of op.errors ?? []) responses[status] = { $ref: '#/components/responses/Error' }
  return {
    operationId: `${op.method}${openApiPath(op.path).replace(/[^A-Za-z0-9]+(.)?/g, (_, c: string | undefined) => (c ?? '').toUpperCase())}`,
    summary: op.summary,
    tags: [op.tag],
    security: SECURITY[op.auth],
    ...(params.length > 0 && { parameters: params }),
    ...(op.body !== undefined && {
      requestBody: {
        required: true,
        content: { [op.bodyType === 'form' ? 'application/x-www-form-urlencoded' : 'application/json']: { schema: bodySchema(op.body) } },
      },
    }),
    responses,
  }
}

/**
 * The OpenAPI 3.1 document of the gateway's HTTP API. Request bodies come from the zod schemas the routes
 * parse with (z.toJSONSchema), so a changed field shows here at once; `serverUrl` is the gateway's PUBLIC_URL.
 */
export function openApiDocument(serverUrl: string): Json {
  const paths: Record<string, Json> = {}
  for (const op of [...OPERATIONS, ...PRIVACY_OPERATIONS, ...SIP_OPERATIONS, ...CAMPAIGN_OPERATIONS]) {
    const path = openApiPath(op.path)
    paths[path] = { ...paths[path], [op.method]: operationObject(op) }
  }
  return {
    openapi: '3.1.0',
    info: {
      title: 'voxgate',
      // The API's version (its paths carry /v1), not the package's.
      version: 'v1',
      description:
        'Self-hosted voice agent gateway. The browser WebSocket protocol and the webhooks sent to your backend are ' +
        'described in docs/reference/ (browser-websocket.md, webhooks-and-sse.md); additions to the SPEC are named there.',
    },
    servers: [{ url: serverUrl }],
    tags: ['sessions', 'agents', 'calls', 'carrier', 'admin', 'health', 'observability', 'sip', 'campaigns', 'dnc'].map((name) => ({
      name,
    })),
    paths,
    components: {
      securitySchemes: {
        apiKey: { type: 'http', scheme: 'bearer', description: "An organization's API key (server-to-server only)" },
        adminToken: { type: 'http', scheme: 'bearer', description: 'ADMIN_TOKEN' },
        metricsToken: { type: 'http', scheme: 'bearer', description: 'METRICS_TOKEN, when set' },
        agentLink: { type: 'http', scheme: 'bearer', description: "An agent link's token (vxl_...): browser sessions with one agent only" },
        carrierSignature: { type: 'apiKey', in: 'header', name: 'X-Carrier-Signature', description: 'signed by the carrier' },
        twilioSignature: {
          type: 'apiKey',
          in: 'header',
          name: 'X-Twilio-Signature',
          description: 'the same signature under the name a Twilio account sends it',
        },
        webhookSignature: {
          type: 'apiKey',
          in: 'header',
          name: 'service-signature',
          description: "signed by the gateway with the agent's webhook secret; checked by the developer's local server",
        },
      },
      schemas: {
        Error: ERROR_SCHEMA,
        LatencyBreakdown: LATENCY_BREAKDOWN_SCHEMA,
        TurnFailure: TURN_FAILURE_SCHEMA,
        SessionDetails: SESSION_DETAILS_SCHEMA,
        SessionList: SESSION_LIST_SCHEMA,
        ...responseSchemas(),
      },
      responses: {
        Error: {
          description: 'the error body',
          headers: {
            'Retry-After': {
              description: 'whole seconds to wait, on a refusal that passes with time (429 `rate_limited`, 503)',
              schema: { type: 'integer', minimum: 1 },
            },
          },
          content: { 'application/json': { schema: { $ref: '#/components/schemas/Error' } } },
        },
      },
    },
  }
}
