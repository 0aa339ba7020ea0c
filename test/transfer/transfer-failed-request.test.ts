/**
 * The agent webhook request of a failed warm transfer: `type: "transfer.failed"` with the reason and the
 * target beside the common fields, in the shape `transferFailedRequestBody` documents.
 */
import t from 'tap'
import { webhookRequestBody } from '../../pipeline/agent/webhook-body.js'
import { transferFailedRequestBody } from '../../pipeline/agent/transfer-failed-body.js'

const context = {
  sessionId: 'sess_1',
  conversationId: 'conv_1',
  fromPhoneNumber: '+442071838750',
  toPhoneNumber: '+14155550123',
  customMetadata: { crm: 'x' },
  metadata: { ticket: 7 },
  history: [],
}

t.test('the request body carries reason and to, as transfer-failed-body.ts describes it', async (t) => {
  const body = webhookRequestBody({ kind: 'transfer_failed', turnId: 'assistant-1', reason: 'no_answer', to: '+14155550100' }, context)
  t.strictSame(body, {
    type: 'transfer.failed',
    session_id: 'sess_1',
    conversation_id: 'conv_1',
    turn_id: 'assistant-1',
    custom_metadata: { crm: 'x' },
    metadata: { ticket: 7 },
    reason: 'no_answer',
    to: '+14155550100',
    from_phone_number: '+442071838750',
    to_phone_number: '+14155550123',
  })
  t.strictSame(
    body,
    transferFailedRequestBody({ turnId: 'assistant-1', reason: 'no_answer', to: '+14155550100' }, context),
    'same as the builder',
  )
})
