import t from 'tap'
import { decodeBackendEventText } from '../../pipeline/agent/backend-event.js'
import { SseDecoder } from '../../pipeline/agent/sse-decoder.js'
import { webhookRequestBody } from '../../pipeline/agent/webhook-body.js'
import { WordCoalescer } from '../../pipeline/agent/word-coalescer.js'
import { context } from './agent-helpers.js'

function decodeSplit(text: string, size: number): string[] {
  const decoder = new SseDecoder({ maxEventChars: 1000 })
  const out: string[] = []
  for (let i = 0; i < text.length; i += size) out.push(...decoder.push(text.slice(i, i + size)).events)
  out.push(...decoder.end().events)
  return out
}

t.test('every split point and line ending gives the same events', async (t) => {
  const lf = ': hello\nevent: x\nid: 7\ndata: {"a":1}\n\ndata: line one\ndata: line two\n\ndata:tight\n\n'
  const expected = ['{"a":1}', 'line one\nline two', 'tight']
  for (const eol of ['\n', '\r\n', '\r']) {
    const text = lf.replaceAll('\n', eol)
    for (const size of [1, 2, 3, 5, 7, 13, text.length]) {
      t.same(decodeSplit(text, size), expected, `eol ${JSON.stringify(eol)} split ${size}`)
    }
  }
})

t.test('an event is not dispatched before its blank line; a \\r\\n split between chunks is one line end', async (t) => {
  const decoder = new SseDecoder({ maxEventChars: 1000 })
  t.same(decoder.push('data: a\r').events, [])
  t.same(decoder.push('\n').events, [])
  t.same(decoder.push('\r\n').events, ['a'])
})

t.test('end of stream: a final \\r ends the line; an event without its blank line is dropped', async (t) => {
  const cr = new SseDecoder({ maxEventChars: 1000 })
  t.same(cr.push('data: last\r\r').events, [])
  t.same(cr.end().events, ['last'])
  const open = new SseDecoder({ maxEventChars: 1000 })
  t.same(open.push('data: unfinished\n').events, [])
  t.same(open.end().events, [])
})

t.test('overflow: an event or an unterminated line over the limit', async (t) => {
  const decoder = new SseDecoder({ maxEventChars: 10 })
  t.same(decoder.push('data: ok\n\ndata: 01234567890123\n\ndata: after\n\n'), { events: ['ok'], overflow: true })
  t.same(decoder.push('data: more\n\n'), { events: [], overflow: true }, 'nothing after overflow')
  const line = new SseDecoder({ maxEventChars: 10 })
  t.same(line.push('data: 0123'), { events: [], overflow: false })
  t.same(line.push('456789abcdef'), { events: [], overflow: true })
})

t.test('backend event decoding', async (t) => {
  t.same(decodeBackendEventText('{"type":"response.tts","content":"x","turn_id":"t"}', 't'), {
    ok: true,
    event: { type: 'tts', text: 'x' },
  })
  t.same(decodeBackendEventText('{"type":"response.data","turn_id":"t","content":{"delta":"a"}}', 't'), {
    ok: true,
    event: { type: 'data', content: { delta: 'a' } },
  })
  t.match(decodeBackendEventText('{"type":"response.error","turn_id":"t","error":{"code":42}}', 't'), {
    ok: true,
    event: { type: 'error', code: 'agent_error', message: 'backend reported an error: {"code":42}' },
  })
  // The problem is fixed text; what the backend sent is quoted apart (for debug_failures only).
  t.match(decodeBackendEventText('{"type":"response.end","turn_id":7}', '7'), {
    ok: false,
    problem: 'an event is for another turn, not 7',
    quoted: 'response.end for turn 7',
  })
  t.match(decodeBackendEventText('null', 't'), { ok: false })
})

t.test('request body: null data is sent as null', async (t) => {
  t.same(webhookRequestBody({ kind: 'data', turnId: 'd', data: undefined }, context()).data, null)
})

t.test('word coalescer', async (t) => {
  const words = new WordCoalescer(8)
  t.equal(words.push('Hel'), '')
  t.equal(words.push('lo wor'), 'Hello ')
  t.equal(words.push('ld,\nnext'), 'world,\n')
  t.equal(words.push('verylongword'), 'nextverylongword', 'a run without spaces is released at the bound')
  t.equal(words.push('end'), '')
  t.equal(words.flush(), 'end')
  t.equal(words.flush(), '')
})
