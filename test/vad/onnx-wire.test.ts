import { readFileSync } from 'node:fs'
import t from 'tap'
import { encodeFields, parseFields, stringField, varintField, varintValue } from '../../pipeline/vad/onnx-wire.js'
import { defaultSileroModelPath } from '../../pipeline/vad/silero-model.js'

t.test('parsing and encoding the shipped model gives back its bytes, at every level that is parsed', async (t) => {
  const shipped = new Uint8Array(readFileSync(defaultSileroModelPath()))
  const top = parseFields(shipped)
  t.same(Buffer.from(encodeFields(top)), Buffer.from(shipped), 'the model')
  // Each length-delimited field that is itself a message (the graph, its nodes) round-trips too.
  const graph = top.find((f) => f.no === 7)!
  const nodes = parseFields(graph.raw)
  t.ok(nodes.length > 5)
  t.same(Buffer.from(encodeFields(nodes)), Buffer.from(graph.raw), 'the graph')
  for (const n of nodes.filter((f) => f.no === 1)) t.same(Buffer.from(encodeFields(parseFields(n.raw))), Buffer.from(n.raw))
})

t.test('varints: large, negative (ten bytes) and multi-byte values round-trip', async (t) => {
  for (const v of [0n, 1n, 127n, 128n, 300n, (1n << 62n) + 5n, -1n, -300n, (1n << 63n) - 1n]) {
    const f = varintField(3, v)
    const [back] = parseFields(encodeFields([f]))
    t.equal(back!.no, 3)
    t.equal(varintValue(back!), v, `${v}`)
  }
  t.equal(varintField(1, -1n).raw.length, 10, 'a negative int64 takes ten bytes')
})

t.test('strings and nesting', async (t) => {
  const inner = encodeFields([stringField(1, 'Conv'), varintField(2, 42)])
  const outer = parseFields(encodeFields([{ no: 5, wt: 2, raw: inner }, stringField(6, 'é')]))
  t.equal(outer.length, 2)
  const [a, b] = parseFields(outer[0]!.raw)
  t.equal(new TextDecoder().decode(a!.raw), 'Conv')
  t.equal(varintValue(b!), 42n)
  t.equal(new TextDecoder().decode(outer[1]!.raw), 'é')
})

t.test('malformed messages throw instead of reading past the end', async (t) => {
  t.throws(() => parseFields(Uint8Array.from([0x0a, 0x05, 0x41])), /past the end/)
  t.throws(() => parseFields(Uint8Array.from([0x08, 0x80])), /varint/)
  t.throws(() => parseFields(Uint8Array.from([0x0b])), /wire type 3/)
})
