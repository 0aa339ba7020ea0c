import t from 'tap'
import { MAX_JSON_DEPTH, jsonNestsDeeperThan } from '../../pipeline/runtime/json-depth.js'
import { decodeBackendEventText } from '../../pipeline/agent/backend-event.js'

/** An object nested `depth` levels: `{}` is 1, `{"a":{}}` 2. */
function nested(depth: number): string {
  return `${'{"a":'.repeat(depth - 1)}{}${'}'.repeat(depth - 1)}`
}

t.test('counts levels of objects and arrays outside strings', async (t) => {
  t.equal(MAX_JSON_DEPTH, 32)
  t.equal(jsonNestsDeeperThan(nested(32)), false, '32 levels pass')
  t.equal(jsonNestsDeeperThan(nested(33)), true, '33 levels do not')
  t.equal(jsonNestsDeeperThan('[[[]]]', 2), true, 'arrays count')
  t.equal(jsonNestsDeeperThan('[{"a":[]}]', 3), false, 'mixed, exactly at the bound')
  t.equal(jsonNestsDeeperThan('[[],[],[],[]]', 2), false, 'siblings do not add up')
  t.equal(jsonNestsDeeperThan('{"a":"[[[[[[{{{{"}', 1), false, 'brackets inside a string are text')
  t.equal(jsonNestsDeeperThan('{"a":"\\"[[[["}', 1), false, 'an escaped quote does not end the string')
  t.equal(jsonNestsDeeperThan('{"a":"\\\\"}', 1), false, 'an escaped backslash does not escape the quote after it')
  t.equal(jsonNestsDeeperThan('{"a\\\\":[[]]}', 2), true, 'and what follows it is counted again')
})

t.test('20,000 levels are refused in one pass, without a stack overflow', async (t) => {
  t.equal(jsonNestsDeeperThan(`${'['.repeat(20_000)}${']'.repeat(20_000)}`), true)
  t.equal(jsonNestsDeeperThan('['.repeat(20_000)), true, 'unterminated input too')
})

t.test('bytes read the same as text, multi-byte characters included', async (t) => {
  t.equal(jsonNestsDeeperThan(Buffer.from(`{"é":"[[[[ü","b":${nested(32)}}`)), true, '33 levels in bytes')
  t.equal(jsonNestsDeeperThan(Buffer.from(`{"日本":"[[[[","b":${nested(31)}}`)), false, '32 levels in bytes')
})

t.test("a backend's event nested too deeply is a problem, not a crash", async (t) => {
  const deep = `{"type":"response.data","turn_id":"t","content":${nested(1000)}}`
  t.match(decodeBackendEventText(deep, 't'), { ok: false, problem: /deeper than 32 levels/ })
  t.match(decodeBackendEventText(`{"type":"response.data","turn_id":"t","content":${nested(30)}}`, 't'), { ok: true })
})
