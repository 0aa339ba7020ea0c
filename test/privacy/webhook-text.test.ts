import t from 'tap'
import { webhookRequestBody } from '../../pipeline/agent/webhook-body.js'
import { webhookRedaction } from '../../gateway/sessions/ports/pipeline-factory.js'
import { baseConfig, validOf } from '../config/fixtures/config-fixtures.js'

const SAID = 'my card is 4111 1111 1111 1111 and my email is jo@example.com'
const message = { kind: 'message' as const, turnId: 'user-1', text: SAID }
const context = { sessionId: 's1', conversationId: 'c1', history: [] }

t.test('by default the agent webhook gets the text as said (the backend may take the payment)', async (t) => {
  const config = validOf({ ...baseConfig(), privacy: { redact: { email: true } } })
  t.equal(webhookRedaction(config), undefined)
  t.equal(webhookRequestBody(message, { ...context, redactWebhookText: webhookRedaction(config) }).text, SAID)
  t.equal(webhookRequestBody(message, context).text, SAID, 'no privacy block: as said')
})

t.test('redact_webhooks: the text is redacted with the agent switches', async (t) => {
  const config = validOf({ ...baseConfig(), privacy: { redact_webhooks: true, redact: { email: true } } })
  const body = webhookRequestBody(message, { ...context, redactWebhookText: webhookRedaction(config) })
  t.equal(body.text, 'my card is [card] and my email is [email]')
})
