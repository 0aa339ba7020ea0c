/**
 * Just enough of the protobuf wire format to edit an ONNX model (`onnx.proto`, proto2) without a schema: a message is
 * a list of fields whose bytes are kept as they are, so whatever is not touched is written back byte for byte
 * (test/vad/onnx-wire.test.ts checks it on the shipped Silero model). Field numbers are onnx.proto's.
 */

/** One field of a message. `raw` is the value's bytes: a varint as encoded, or a length-delimited payload. */
export interface WireField {
  no: number
  /** 0 varint, 1 fixed64, 2 length-delimited, 5 fixed32 (groups are not used by ONNX). */
  wt: 0 | 1 | 2 | 5
  raw: Uint8Array
}

/** ModelProto, GraphProto, NodeProto, AttributeProto and TensorProto field numbers used here. */
export const MODEL = { opsetImport: 8, graph: 7 } as const
export const OPSET = { domain: 1, version: 2 } as const
export const GRAPH = { node: 1, initializer: 5 } as const
export const NODE = { input: 1, output: 2, name: 3, opType: 4, attribute: 5, domain: 7 } as const
export const ATTRIBUTE = { name: 1, i: 3, s: 4, t: 5, g: 6, ints: 8, graphs: 11, type: 20 } as const
export const TENSOR = { dims: 1, dataType: 2, name: 8, rawData: 9 } as const
/** AttributeProto.AttributeType values. */
export const ATTRIBUTE_TYPE = { INT: 2, TENSOR: 4, INTS: 7 } as const
/** TensorProto.DataType.INT64. */
const INT64 = 7
/** One of each for the whole rewrite: a model's names and op types are read and written thousands of times. */
const UTF8_DECODER = new TextDecoder()
const UTF8_ENCODER = new TextEncoder()

/** The fields of one message; values are views into `bytes`. Throws on malformed input. */
export function parseFields(bytes: Uint8Array): WireField[] {
  const fields: WireField[] = []
  let p = 0
  while (p < bytes.length) {
    const [key, afterKey] = readVarint(bytes, p)
    const no = Number(key >> 3n)
    const wt = Number(key & 7n)
    p = afterKey
    let end: number
    if (wt === 0) end = readVarint(bytes, p)[1]
    else if (wt === 1) end = p + 8
    else if (wt === 5) end = p + 4
    else if (wt === 2) {
      const [len, start] = readVarint(bytes, p)
      p = start
      end = start + Number(len)
    } else throw new RangeError(`protobuf: wire type ${wt} is not supported`)
    if (end > bytes.length) throw new RangeError('protobuf: field runs past the end of the message')
    fields.push({ no, wt, raw: bytes.subarray(p, end) })
    p = end
  }
  return fields
}

/** Serializes fields in order (the inverse of parseFields). */
export function encodeFields(fields: readonly WireField[]): Uint8Array {
  const heads = fields.map((f) => {
    const key = varintBytes(BigInt((f.no << 3) | f.wt))
    return f.wt === 2 ? Buffer.concat([key, varintBytes(BigInt(f.raw.length))]) : key
  })
  let size = 0
  for (let i = 0; i < fields.length; i++) size += heads[i]!.length + fields[i]!.raw.length
  const out = new Uint8Array(size)
  let o = 0
  for (let i = 0; i < fields.length; i++) {
    out.set(heads[i]!, o)
    o += heads[i]!.length
    out.set(fields[i]!.raw, o)
    o += fields[i]!.raw.length
  }
  return out
}

/** A varint field's value as a signed 64-bit integer (int64 fields: negatives take ten bytes). */
export function varintValue(f: WireField): bigint {
  return BigInt.asIntN(64, readVarint(f.raw, 0)[0])
}

/** A length-delimited field read as UTF-8. */
export function stringValue(f: WireField): string {
  return UTF8_DECODER.decode(f.raw)
}

/** The first field numbered `no`, if any. */
export function first(fields: readonly WireField[], no: number): WireField | undefined {
  return fields.find((f) => f.no === no)
}

export function varintField(no: number, value: number | bigint): WireField {
  return { no, wt: 0, raw: varintBytes(BigInt.asUintN(64, BigInt(value))) }
}

export function bytesField(no: number, raw: Uint8Array): WireField {
  return { no, wt: 2, raw }
}

export function stringField(no: number, text: string): WireField {
  return bytesField(no, UTF8_ENCODER.encode(text))
}

/** A NodeProto in the default domain. */
export function onnxNode(
  opType: string,
  inputs: readonly string[],
  outputs: readonly string[],
  name: string,
  attributes: WireField[] = [],
): WireField {
  return bytesField(
    GRAPH.node,
    encodeFields([
      ...inputs.map((s) => stringField(NODE.input, s)),
      ...outputs.map((s) => stringField(NODE.output, s)),
      stringField(NODE.name, name),
      stringField(NODE.opType, opType),
      ...attributes,
    ]),
  )
}

export function intAttribute(name: string, value: number): WireField {
  return bytesField(
    NODE.attribute,
    encodeFields([stringField(ATTRIBUTE.name, name), varintField(ATTRIBUTE.i, value), varintField(ATTRIBUTE.type, ATTRIBUTE_TYPE.INT)]),
  )
}

export function intsAttribute(name: string, values: readonly number[]): WireField {
  return bytesField(
    NODE.attribute,
    encodeFields([
      stringField(ATTRIBUTE.name, name),
      ...values.map((v) => varintField(ATTRIBUTE.ints, v)),
      varintField(ATTRIBUTE.type, ATTRIBUTE_TYPE.INTS),
    ]),
  )
}

/** A `Constant` node whose value is a 1-D int64 tensor. */
export function int64Constant(output: string, values: readonly bigint[]): WireField {
  const data = new Uint8Array(8 * values.length)
  const view = new DataView(data.buffer)
  for (let i = 0; i < values.length; i++) view.setBigInt64(8 * i, values[i]!, true)
  const tensor = encodeFields([
    varintField(TENSOR.dims, values.length),
    varintField(TENSOR.dataType, INT64),
    bytesField(TENSOR.rawData, data),
  ])
  const value = bytesField(
    NODE.attribute,
    encodeFields([
      stringField(ATTRIBUTE.name, 'value'),
      bytesField(ATTRIBUTE.t, tensor),
      varintField(ATTRIBUTE.type, ATTRIBUTE_TYPE.TENSOR),
    ]),
  )
  return onnxNode('Constant', [], [output], `${output}/Constant`, [value])
}

function readVarint(bytes: Uint8Array, at: number): [bigint, number] {
  let value = 0n
  let shift = 0n
  for (let p = at; p < bytes.length && p < at + 10; p++) {
    const b = bytes[p]!
    value |= BigInt(b & 0x7f) << shift
    if (b < 0x80) return [value, p + 1]
    shift += 7n
  }
  throw new RangeError('protobuf: truncated or overlong varint')
}

function varintBytes(value: bigint): Uint8Array {
  const out: number[] = []
  let v = value
  do {
    let b = Number(v & 0x7fn)
    v >>= 7n
    if (v !== 0n) b |= 0x80
    out.push(b)
  } while (v !== 0n)
  return Uint8Array.from(out)
}
