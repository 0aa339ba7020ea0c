import t from 'tap'
import { transferLifecycleEvent } from '../../gateway/transfer/transfer-events.js'
import { TRANSFER_FAILURE_REASONS, type TransferFailureReason } from '../../gateway/transfer/transfer-steps.js'
import type { AgentContext } from '../../pipeline/agent/agent-step.js'
import {
  TRANSFER_FAILED_DEFAULT_LINES,
  transferFailedRequestBody,
  type TransferFailedReason,
} from '../../pipeline/agent/transfer-failed-body.js'

// The row type through the builder (importing the store would put this pure test in the database suite).
type SessionRow = Parameters<typeof transferLifecycleEvent>[0]

const row: SessionRow = {
  id: 'ses_1',
  conversation_id: 'conv_1',
  agent_id: 'agt_1',
  organization_id: 'org_1',
  status: 'connected',
  channel: 'carrier',
  direction: 'inbound',
  key_hash: null,
  key_expires_at: null,
  key_used_at: null,
  agent_link_id: null,
  config_override: null,
  metadata: { crm: 'A-7' },
  call_sid: 'CA1',
  call_status: 'in-progress',
  from_phone_number: '+14155550100',
  from_phone_country: 'US',
  to_phone_number: '+14155550199',
  to_phone_country: 'US',
  ip_address: null,
  country_code: null,
  started_at: new Date('2026-11-26T01:00:00Z'),
  ended_at: null,
  duration_ms: null,
  end_reason: null,
  transcription_duration_seconds: null,
  tts_duration_seconds: null,
  latency_ms: null,
  recording_status: 'disabled',
  recording_url: null,
  transferred_to: null,
  transfers: null,
  machine_detection: false,
  answered_by: null,
  dialed_at: null,
  campaign_contact_id: null,
  lease_owner: null,
  lease_expires_at: null,
  charged: false,
  created_at: new Date('2026-11-26T01:00:00Z'),
  updated_at: new Date('2026-11-26T01:00:00Z'),
}
const at = new Date('2026-11-26T01:02:03.456Z')
const subject = { to: '+442071838750', at }

t.test('transfer lifecycle events carry the session fields, the target and their timings', async (t) => {
  const common = {
    session_id: 'ses_1',
    conversation_id: 'conv_1',
    custom_metadata: { team: 'billing' },
    from_phone_number: '+14155550100',
    to_phone_number: '+14155550199',
    agent_id: 'agt_1',
    mode: 'warm',
    to: '+442071838750',
    occurred_at: '2026-11-26T01:02:03.456Z',
  }
  const custom = { team: 'billing' }
  t.strictSame(transferLifecycleEvent(row, { type: 'transfer.started', atMs: 0 }, subject, custom), {
    type: 'transfer.started',
    ...common,
    elapsed_ms: 0,
    metadata: { crm: 'A-7' },
  })
  t.strictSame(transferLifecycleEvent(row, { type: 'transfer.answered', atMs: 6500 }, subject, custom), {
    type: 'transfer.answered',
    ...common,
    elapsed_ms: 6500,
    metadata: { crm: 'A-7' },
  })
  t.strictSame(transferLifecycleEvent(row, { type: 'transfer.connected', atMs: 11250, answeredAtMs: 6500 }, subject, custom), {
    type: 'transfer.connected',
    ...common,
    elapsed_ms: 11250,
    answered_after_ms: 6500,
    metadata: { crm: 'A-7' },
  })
  t.strictSame(
    transferLifecycleEvent(
      row,
      { type: 'transfer.failed', atMs: 9000, reason: 'declined', phase: 'awaiting_acceptance', answeredAtMs: 6500 },
      subject,
      custom,
    ),
    {
      type: 'transfer.failed',
      ...common,
      elapsed_ms: 9000,
      answered_after_ms: 6500,
      reason: 'declined',
      failed_in: 'awaiting_acceptance',
      metadata: { crm: 'A-7' },
    },
  )
})

t.test('absent fields are left out: a browser session without custom metadata, a failure before any answer', async (t) => {
  const browser: SessionRow = { ...row, channel: 'browser', from_phone_number: null, to_phone_number: null, metadata: null }
  const e = transferLifecycleEvent(
    browser,
    { type: 'transfer.failed', atMs: 25000, reason: 'no_answer', phase: 'ringing', answeredAtMs: undefined },
    subject,
    undefined,
  )
  t.strictSame(e, {
    type: 'transfer.failed',
    session_id: 'ses_1',
    conversation_id: 'conv_1',
    agent_id: 'agt_1',
    mode: 'warm',
    to: '+442071838750',
    occurred_at: '2026-11-26T01:02:03.456Z',
    elapsed_ms: 25000,
    reason: 'no_answer',
    failed_in: 'ringing',
    metadata: {},
  })
  t.notOk('answered_after_ms' in e)
})

const context: AgentContext = {
  sessionId: 'ses_1',
  conversationId: 'conv_1',
  fromPhoneNumber: '+14155550100',
  toPhoneNumber: '+14155550199',
  customMetadata: { team: 'billing' },
  metadata: { crm: 'A-7' },
  history: [],
}

t.test('the agent webhook transfer.failed: the turn request fields and the reason', async (t) => {
  const body = transferFailedRequestBody({ turnId: 'trn_9', reason: 'busy', to: '+442071838750' }, context)
  t.strictSame(body, {
    type: 'transfer.failed',
    session_id: 'ses_1',
    conversation_id: 'conv_1',
    turn_id: 'trn_9',
    custom_metadata: { team: 'billing' },
    metadata: { crm: 'A-7' },
    reason: 'busy',
    to: '+442071838750',
    from_phone_number: '+14155550100',
    to_phone_number: '+14155550199',
  })
  t.strictSame(Object.keys(body), [
    'type',
    'session_id',
    'conversation_id',
    'turn_id',
    'custom_metadata',
    'metadata',
    'reason',
    'to',
    'from_phone_number',
    'to_phone_number',
  ])
  const bare = transferFailedRequestBody(
    { turnId: 'trn_9', reason: 'timeout', to: 'sip:desk@cc.example.com' },
    { sessionId: 's', conversationId: 'c', history: [] },
  )
  t.strictSame(bare, {
    type: 'transfer.failed',
    session_id: 's',
    conversation_id: 'c',
    turn_id: 'trn_9',
    metadata: {},
    reason: 'timeout',
    to: 'sip:desk@cc.example.com',
  })
})

t.test('the pipeline and the gateway name the same reasons; every reason a caller can hear has a default line', async (t) => {
  // Both directions: each type is assignable to the other (a compile-time check), and the lists agree at run time.
  const toPipeline = (r: TransferFailureReason): TransferFailedReason => r
  const toGateway = (r: TransferFailedReason): TransferFailureReason => r
  t.strictSame(TRANSFER_FAILURE_REASONS.map(toPipeline).map(toGateway), [...TRANSFER_FAILURE_REASONS])
  t.strictSame(Object.keys(TRANSFER_FAILED_DEFAULT_LINES).sort(), TRANSFER_FAILURE_REASONS.filter((r) => r !== 'caller_hung_up').sort())
  for (const line of Object.values(TRANSFER_FAILED_DEFAULT_LINES)) t.match(line, /^I am sorry, .+\?$/)
})
