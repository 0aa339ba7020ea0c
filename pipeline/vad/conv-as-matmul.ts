import {
  ATTRIBUTE,
  bytesField,
  encodeFields,
  first,
  GRAPH,
  int64Constant,
  intAttribute,
  intsAttribute,
  MODEL,
  NODE,
  onnxNode,
  OPSET,
  parseFields,
  stringValue,
  TENSOR,
  varintValue,
  type WireField,
} from './onnx-wire.js'

/**
 * Rewrites an ONNX model's 1-D convolutions as one matrix product over the whole batch.
 *
 * onnxruntime's CPU Conv runs each item of a batch as its own im2col + GEMM. Silero's convolutions see 1 to 4 time
 * steps per frame, so a model call of 128 frames made 128 matrix products 1-4 columns wide, at a fraction of the
 * speed a GEMM reaches. Here each Conv becomes: the input to [batch, time, channels], the K shifted (strided) slices
 * side by side as [batch, time, K * channels], one MatMul with the weight laid out [K * channels, out] (onnxruntime
 * folds the batch into the rows: one GEMM per model call), the bias, and back to [batch, out, time]. The weight's
 * transpose is a constant expression: the runtime folds it when the session loads.
 *
 * The result is the same function (probabilities agree within 1e-6, test/vad/conv-as-matmul.test.ts); measured
 * with `npm run bench -- vad-model`, see pipeline/vad/README.md.
 *
 * Rewritten: Conv nodes in the default domain, in every (sub)graph, with one spatial axis, group 1, dilation 1, no
 * auto_pad, and either a kernel of at most MAX_SLICES taps, or (Silero's STFT) a kernel that is a multiple m <=
 * MAX_SLICES of its stride with no padding and a known input channel count: the input is cut into stride-sized blocks
 * and m consecutive blocks make a window (this form needs the input length to be a multiple of the stride, which
 * holds for the frame widths Silero is fed). Anything else is left as it is.
 */

/** Most shifted copies (taps, or blocks for the strided form) one rewritten convolution makes of its input. */
export const MAX_SLICES = 16

/** The lowest default-domain opset the rewrite's nodes exist in (Slice, Pad and Reshape with tensor inputs). */
const MIN_OPSET = 13

/** Slice's "to the end". */
const INT64_MAX = (1n << 63n) - 1n

export interface FoldResult {
  /** The model's bytes: the rewritten model, or the input itself when nothing was rewritten. */
  model: Uint8Array
  /** Conv nodes rewritten (0: the model is returned unchanged). */
  convs: number
}

/** Rewrites `model` (ONNX ModelProto bytes); throws only on bytes that are not a protobuf message. */
export function foldBatchIntoConvs(model: Uint8Array): FoldResult {
  const fields = parseFields(model)
  if (defaultOpset(fields) < MIN_OPSET) return { model, convs: 0 }
  let convs = 0
  const out = fields.map((f) => {
    if (f.no !== MODEL.graph) return f
    const g = rewriteGraph(f.raw, new Map())
    convs += g.convs
    return bytesField(MODEL.graph, g.raw)
  })
  return convs === 0 ? { model, convs } : { model: encodeFields(out), convs }
}

function defaultOpset(model: readonly WireField[]): number {
  for (const f of model) {
    if (f.no !== MODEL.opsetImport) continue
    const o = parseFields(f.raw)
    const domain = first(o, OPSET.domain)
    const version = first(o, OPSET.version)
    if ((domain === undefined || isDefaultDomain(stringValue(domain))) && version !== undefined) return Number(varintValue(version))
  }
  return 0
}

function isDefaultDomain(domain: string): boolean {
  return domain === '' || domain === 'ai.onnx'
}

/** Known shapes of constant tensors by name (initializers and Constant nodes), visible in nested graphs. */
type Shapes = ReadonlyMap<string, readonly number[]>

function rewriteGraph(raw: Uint8Array, outer: Shapes): { raw: Uint8Array; convs: number } {
  const fields = parseFields(raw)
  const shapes = new Map(outer)
  for (const f of fields) {
    if (f.no === GRAPH.initializer) noteTensor(shapes, parseFields(f.raw), undefined)
    else if (f.no === GRAPH.node) noteConstant(shapes, parseFields(f.raw))
  }
  let convs = 0
  const out: WireField[] = []
  for (const f of fields) {
    if (f.no !== GRAPH.node) {
      out.push(f)
      continue
    }
    const node = parseFields(f.raw)
    const replaced = opType(node) === 'Conv' ? convAsMatMul(node, shapes) : undefined
    if (replaced !== undefined) {
      out.push(...replaced)
      convs++
      continue
    }
    // Nested graphs (If, Loop, Scan) are rewritten too; the node is rebuilt only if one of them changed.
    let nested = 0
    const attributes = node.map((a) => {
      if (a.no !== NODE.attribute) return a
      const attr = parseFields(a.raw)
      let changed = false
      const rebuilt = attr.map((x) => {
        if (x.no !== ATTRIBUTE.g && x.no !== ATTRIBUTE.graphs) return x
        const g = rewriteGraph(x.raw, shapes)
        if (g.convs === 0) return x
        nested += g.convs
        changed = true
        return bytesField(x.no, g.raw)
      })
      return changed ? bytesField(NODE.attribute, encodeFields(rebuilt)) : a
    })
    out.push(nested === 0 ? f : bytesField(GRAPH.node, encodeFields(attributes)))
    convs += nested
  }
  return convs === 0 ? { raw, convs } : { raw: encodeFields(out), convs }
}

function opType(node: readonly WireField[]): string {
  const domain = first(node, NODE.domain)
  if (domain !== undefined && !isDefaultDomain(stringValue(domain))) return ''
  const op = first(node, NODE.opType)
  return op === undefined ? '' : stringValue(op)
}

function noteConstant(shapes: Map<string, readonly number[]>, node: readonly WireField[]): void {
  if (opType(node) !== 'Constant') return
  const output = first(node, NODE.output)
  for (const a of node) {
    if (a.no !== NODE.attribute) continue
    const tensor = first(parseFields(a.raw), ATTRIBUTE.t)
    if (tensor !== undefined && output !== undefined) noteTensor(shapes, parseFields(tensor.raw), stringValue(output))
  }
}

function noteTensor(shapes: Map<string, readonly number[]>, tensor: readonly WireField[], name: string | undefined): void {
  const nameField = first(tensor, TENSOR.name)
  const n = name ?? (nameField === undefined ? undefined : stringValue(nameField))
  if (n === undefined) return
  // dims is `repeated int64`: written unpacked by most exporters; a packed list is one length-delimited field.
  const dims: number[] = []
  for (const f of tensor) {
    if (f.no !== TENSOR.dims) continue
    if (f.wt === 0) dims.push(Number(varintValue(f)))
    else return
  }
  shapes.set(n, dims)
}

interface ConvAttributes {
  kernel: number | undefined
  stride: number
  padBegin: number
  padEnd: number
  /** False when an attribute makes the node one this rewrite does not handle. */
  plain: boolean
}

function convAttributes(node: readonly WireField[]): ConvAttributes {
  const c: ConvAttributes = { kernel: undefined, stride: 1, padBegin: 0, padEnd: 0, plain: true }
  for (const a of node) {
    if (a.no !== NODE.attribute) continue
    const attr = parseFields(a.raw)
    const nameField = first(attr, ATTRIBUTE.name)
    const name = nameField === undefined ? '' : stringValue(nameField)
    const ints = attr.filter((x) => x.no === ATTRIBUTE.ints).map((x) => (x.wt === 0 ? Number(varintValue(x)) : Number.NaN))
    const i = first(attr, ATTRIBUTE.i)
    const s = first(attr, ATTRIBUTE.s)
    switch (name) {
      case 'kernel_shape':
        if (ints.length !== 1) c.plain = false
        c.kernel = ints[0]
        break
      case 'strides':
        if (ints.length !== 1) c.plain = false
        c.stride = ints[0] ?? Number.NaN
        break
      case 'pads':
        if (ints.length !== 2) c.plain = false
        c.padBegin = ints[0] ?? Number.NaN
        c.padEnd = ints[1] ?? Number.NaN
        break
      case 'dilations':
        if (ints.length !== 1 || ints[0] !== 1) c.plain = false
        break
      case 'group':
        if (i === undefined || varintValue(i) !== 1n) c.plain = false
        break
      case 'auto_pad':
        if (s !== undefined && stringValue(s) !== 'NOTSET') c.plain = false
        break
      default:
        c.plain = false
    }
  }
  if (![c.stride, c.padBegin, c.padEnd].every((v) => Number.isInteger(v) && v >= 0) || c.stride < 1) c.plain = false
  return c
}

/** The nodes that replace `node`, or undefined to keep it. */
function convAsMatMul(node: readonly WireField[], shapes: Shapes): WireField[] | undefined {
  const inputs = node.filter((f) => f.no === NODE.input).map(stringValue)
  const outputs = node.filter((f) => f.no === NODE.output).map(stringValue)
  const [x, w, b] = inputs
  if (x === undefined || w === undefined || x === '' || w === '' || outputs.length !== 1) return undefined
  const out = outputs[0]!
  const weight = shapes.get(w)
  if (weight !== undefined && weight.length !== 3) return undefined
  const a = convAttributes(node)
  const k = a.kernel ?? weight?.[2]
  if (!a.plain || k === undefined || !Number.isInteger(k) || k < 1) return undefined
  const inChannels = weight?.[1]
  const s = a.stride
  const blocks = k / s
  const blockForm = k > MAX_SLICES && a.padBegin === 0 && a.padEnd === 0 && Number.isInteger(blocks) && blocks <= MAX_SLICES
  if (k > MAX_SLICES && !(blockForm && inChannels !== undefined)) return undefined

  const base = `${out}/batch_folded`
  const nodes: WireField[] = []
  const constant = (name: string, values: readonly bigint[]): string => {
    const full = `${base}/${name}`
    nodes.push(int64Constant(full, values))
    return full
  }
  const op = (type: string, ins: readonly string[], name: string, attributes: WireField[] = []): string => {
    const full = `${base}/${name}`
    nodes.push(onnxNode(type, ins, [full], full, attributes))
    return full
  }
  /** Slice of `data` on axis 1 from `start`, `tail` elements short of the end, every `step`th. */
  const slice = (data: string, name: string, start: number, tail: number, step: number): string =>
    op(
      'Slice',
      [
        data,
        constant(`${name}_starts`, [BigInt(start)]),
        constant(`${name}_ends`, [tail === 0 ? INT64_MAX : BigInt(-tail)]),
        constant(`${name}_axes`, [1n]),
        constant(`${name}_steps`, [BigInt(step)]),
      ],
      name,
    )

  // Weight [out, in, K] -> [K, in, out] -> [K * in, out]: row k * in + c, as the columns below.
  const weightRows = op('Flatten', [op('Transpose', [w], 'weight_t', [intsAttribute('perm', [2, 1, 0])])], 'weight_rows', [
    intAttribute('axis', 2),
  ])
  const timeMajor = op('Transpose', [x], 'input_t', [intsAttribute('perm', [0, 2, 1])])
  const columns: string[] = []
  if (k > MAX_SLICES) {
    // Window t = blocks t .. t + m - 1 of the input cut into stride-sized blocks of [stride * in] values.
    const cut = op('Reshape', [timeMajor, constant('block_shape', [0n, -1n, BigInt(s * inChannels!)])], 'blocks')
    for (let j = 0; j < blocks; j++) columns.push(slice(cut, `block_${j}`, j, blocks - 1 - j, 1))
  } else {
    let padded = timeMajor
    if (a.padBegin > 0 || a.padEnd > 0) {
      padded = op('Pad', [timeMajor, constant('pads', [0n, BigInt(a.padBegin), 0n, 0n, BigInt(a.padEnd), 0n])], 'padded')
    }
    // Tap j of output t reads padded input t * stride + j: the slice from j, k - 1 - j short of the end.
    for (let j = 0; j < k; j++) columns.push(slice(padded, `tap_${j}`, j, k - 1 - j, s))
  }
  const stacked = columns.length === 1 ? columns[0]! : op('Concat', columns, 'columns', [intAttribute('axis', 2)])
  let y = op('MatMul', [stacked, weightRows], 'matmul')
  if (b !== undefined && b !== '') y = op('Add', [y, b], 'bias')
  nodes.push(onnxNode('Transpose', [y], [out], `${base}/output`, [intsAttribute('perm', [0, 2, 1])]))
  return nodes
}
