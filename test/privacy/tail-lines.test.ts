import t from 'tap'
import { requestAnsweredLine, requestStartedLine } from '../../cli/tunnel/exchange-log.js'

const exchange = (text: string, reply: string) => ({
  method: 'POST',
  path: '/api/agent',
  requestBody: Buffer.from(JSON.stringify({ type: 'message', session_id: 's1', turn_id: 'user-1', text })),
  status: 200,
  contentType: 'text/event-stream',
  responseHead: Buffer.from(`data: ${JSON.stringify({ type: 'response.tts', content: reply, turn_id: 'user-1' })}\n\n`),
  bytes: 100,
  ms: 12,
})

t.test('--tail shows what the caller and the agent said with card numbers and SSNs redacted', async (t) => {
  const e = exchange('my card is 4111 1111 1111 1111 and ssn 123-45-6789', 'noted 4111 1111 1111 1111')
  const started = requestStartedLine(e)
  t.match(started, /user: "my card is \[card\] and ssn \[ssn\]"/)
  const answered = requestAnsweredLine(e)
  t.match(answered, /agent: "noted \[card\]"/)
  t.notMatch(started + answered, /4111|6789/)
})

t.test('ordinary words are shown as said', async (t) => {
  t.match(requestStartedLine(exchange('order 12345 please', 'ok')), /user: "order 12345 please"/)
})
