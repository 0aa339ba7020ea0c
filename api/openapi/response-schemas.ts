import { z } from 'zod'
import { pipelineConfigSchema } from '../../pipeline/index.js'

type Json = Record<string, unknown>

const nullable = (type: string): Json => ({ type: [type, 'null'] })
const object = (properties: Record<string, Json>): Json => ({ type: 'object', required: Object.keys(properties), properties })
const ref = (name: string): Json => ({ $ref: `#/components/schemas/${name}` })

/** An agent's stored `config`: what the pipeline's schema gives after validation (defaults filled), as zod derives it. */
function pipelineConfigOutput(): Json {
  const schema = pipelineConfigSchema({ allowInsecureLoopback: false })
  const { $schema: _, ...json } = z.toJSONSchema(schema, { io: 'output', unrepresentable: 'any' }) as Json
  return json
}

/** gateway/store/phone-numbers.ts `PhoneAssignment`. */
const PHONE_ASSIGNMENT_SCHEMA = object({
  phone_number: { type: 'string', description: 'E.164' },
  carrier_sid: nullable('string'),
  friendly_name: nullable('string'),
  assigned_at: { type: 'string' },
})

/** The fields of an agent that GET /v1/agents lists (no config, no webhook secret). */
const AGENT_SUMMARY_PROPERTIES: Record<string, Json> = {
  id: { type: 'string' },
  name: { type: 'string' },
  type: { type: 'string' },
  agent_template_id: nullable('string'),
  created_at: { type: 'string' },
  updated_at: { type: 'string' },
  assigned_phone_numbers: { type: 'array', items: ref('PhoneAssignment') },
}

/** gateway/store/agents.ts `Agent`: one agent with its config and webhook secret. */
const AGENT_SCHEMA = object({
  ...AGENT_SUMMARY_PROPERTIES,
  config: ref('PipelineConfig'),
  webhook_secret: { type: 'string', description: 'signs the webhooks sent to the backend' },
  demo_mode: { type: 'boolean' },
})

/** gateway/store/webhook-deliveries.ts `WebhookDelivery`. */
const WEBHOOK_DELIVERY_SCHEMA = object({
  id: { type: 'string' },
  session_id: { type: 'string' },
  type: { type: 'string', description: "the lifecycle webhook's `type`" },
  url: { type: 'string' },
  status: { type: 'string', enum: ['pending', 'delivered', 'failed'] },
  attempts: { type: 'integer' },
  response_status: nullable('integer'),
  error: nullable('string'),
  created_at: { type: 'string' },
  last_attempt_at: nullable('string'),
})

/** gateway/store/daily-stats.ts `DailyStats`. */
const DAILY_STATS_SCHEMA = object({
  date: { type: 'string', description: 'YYYY-MM-DD (UTC)' },
  sessions: { type: 'integer' },
  minutes: { type: 'number', description: 'connected minutes of the sessions that started that day' },
  turns: { type: 'integer', description: 'turns with a measured latency' },
  latency_p50_ms: nullable('number'),
  latency_p90_ms: nullable('number'),
  latency_p99_ms: nullable('number'),
})

/** gateway/store/sip-trunks.ts `SipTrunk`: never a password, only whether one is set. */
const SIP_TRUNK_SCHEMA = object({
  id: { type: 'string' },
  name: { type: 'string' },
  inbound: {
    oneOf: [
      object({
        allowed_cidrs: { type: 'array', items: { type: 'string' } },
        username: nullable('string'),
        has_password: { type: 'boolean' },
      }),
      { type: 'null' },
    ],
  },
  outbound: {
    oneOf: [
      object({
        uri: { type: 'string' },
        username: nullable('string'),
        has_password: { type: 'boolean' },
        from_number: { ...nullable('string'), description: 'E.164' },
      }),
      { type: 'null' },
    ],
  },
  media_encryption: {
    type: 'string',
    enum: ['none', 'optional', 'required'],
    description: "SRTP (SDES) for the trunk's calls: only over TLS; `required` refuses plain RTP with 488",
  },
  created_at: { type: 'string' },
  updated_at: { type: 'string' },
})

/**
 * Response bodies of the agent, webhook delivery and daily stats routes, for `components.schemas`. Each mirrors
 * the store's mapping named above; test/openapi checks real answers against them, and the console's types are
 * generated from them (client/console/api-types.ts).
 */
export function responseSchemas(): Record<string, Json> {
  return {
    PhoneAssignment: PHONE_ASSIGNMENT_SCHEMA,
    PipelineConfig: pipelineConfigOutput(),
    AgentSummary: object(AGENT_SUMMARY_PROPERTIES),
    AgentList: object({ agents: { type: 'array', items: ref('AgentSummary') } }),
    Agent: AGENT_SCHEMA,
    WebhookDelivery: WEBHOOK_DELIVERY_SCHEMA,
    WebhookDeliveryList: object({ deliveries: { type: 'array', items: ref('WebhookDelivery') } }),
    DailyStats: DAILY_STATS_SCHEMA,
    DailyStatsList: object({ days: { type: 'array', items: ref('DailyStats') } }),
    SipTrunk: SIP_TRUNK_SCHEMA,
    SipTrunkList: object({ trunks: { type: 'array', items: ref('SipTrunk') } }),
  }
}
