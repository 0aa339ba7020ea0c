import { readFileSync } from 'node:fs'
import * as ort from 'onnxruntime-node'
import t from 'tap'
import { int16ToFloat32 } from '../../pipeline/audio/pcm16.js'
import { foldBatchIntoConvs, MAX_SLICES } from '../../pipeline/vad/conv-as-matmul.js'
import {
  bytesField,
  encodeFields,
  first,
  GRAPH,
  intAttribute,
  intsAttribute,
  MODEL,
  NODE,
  ATTRIBUTE,
  onnxNode,
  parseFields,
  stringField,
  stringValue,
  varintField,
  type WireField,
} from '../../pipeline/vad/onnx-wire.js'
import {
  defaultSileroModelPath,
  SILERO_STATE_SIZE,
  SileroModel,
  sileroContextSamples,
  sileroFrameSamples,
  type SileroSampleRate,
} from '../../pipeline/vad/silero-model.js'
import { loadFixture } from '../fixtures/audio/signals.js'

const SESSION: ort.InferenceSession.SessionOptions = { intraOpNumThreads: 1, interOpNumThreads: 1, graphOptimizationLevel: 'all' }

/** Op types of every node in the model, nested graphs included. */
function opCounts(model: Uint8Array): Map<string, number> {
  const counts = new Map<string, number>()
  const walk = (graph: Uint8Array): void => {
    for (const f of parseFields(graph)) {
      if (f.no !== GRAPH.node) continue
      const node = parseFields(f.raw)
      const op = stringValue(first(node, NODE.opType)!)
      counts.set(op, (counts.get(op) ?? 0) + 1)
      for (const a of node.filter((x) => x.no === NODE.attribute)) {
        for (const g of parseFields(a.raw)) if (g.no === ATTRIBUTE.g || g.no === ATTRIBUTE.graphs) walk(g.raw)
      }
    }
  }
  walk(first(parseFields(model), MODEL.graph)!.raw)
  return counts
}

t.test('the shipped Silero model: every convolution is rewritten, the rest is untouched', async (t) => {
  const shipped = new Uint8Array(readFileSync(defaultSileroModelPath()))
  const { model, convs } = foldBatchIntoConvs(shipped)
  const before = opCounts(shipped)
  const after = opCounts(model)
  t.equal(before.get('Conv'), 12, 'the shipped model has 6 convolutions per sample rate')
  t.equal(convs, 12)
  t.equal(after.get('Conv') ?? 0, 0, 'no Conv node is left')
  t.equal(after.get('MatMul'), 12, 'one MatMul each')
  t.equal(after.get('LSTM'), before.get('LSTM'), 'other nodes are kept')
  t.equal(after.get('If'), before.get('If'))
})

t.test('folded and shipped Silero give the same probabilities and state, frame by frame, at both rates', async (t) => {
  const { samples } = loadFixture('two-phrases.wav')
  const x = int16ToFloat32(samples)
  const shipped = new SileroModel({ foldBatch: false })
  const folded = new SileroModel()
  t.teardown(async () => {
    await shipped.close()
    await folded.close()
  })
  await folded.load()
  t.equal(folded.foldedConvs, 12, 'the gateway runs the folded graph')
  for (const rate of [8000, 16000] as SileroSampleRate[]) {
    const frame = sileroFrameSamples(rate)
    const width = frame + sileroContextSamples(rate)
    for (const n of [1, 5, 128]) {
      // n streams over different stretches of the phrase, 12 frames each, state carried from call to call.
      let a: Float32Array = new Float32Array(n * SILERO_STATE_SIZE)
      let b: Float32Array = new Float32Array(n * SILERO_STATE_SIZE)
      let maxProb = 0
      let maxState = 0
      let speech = 0
      for (let k = 0; k < 12; k++) {
        const input = new Float32Array(n * width)
        for (let i = 0; i < n; i++) {
          const start = ((i * 37 + k) * frame) % (x.length - width)
          input.set(x.subarray(start, start + width), i * width)
        }
        const ra = await shipped.infer(rate, n, input, a)
        const rb = await folded.infer(rate, n, input, b)
        for (let i = 0; i < n; i++) {
          maxProb = Math.max(maxProb, Math.abs(ra.probs[i]! - rb.probs[i]!))
          if (ra.probs[i]! > 0.5) speech++
        }
        for (let i = 0; i < ra.state.length; i++) maxState = Math.max(maxState, Math.abs(ra.state[i]! - rb.state[i]!))
        a = ra.state
        b = rb.state
      }
      t.ok(maxProb < 1e-5, `${rate} Hz, batch ${n}: probabilities agree (max difference ${maxProb})`)
      t.ok(maxState < 1e-4, `${rate} Hz, batch ${n}: state agrees (max difference ${maxState})`)
      if (n === 128) t.ok(speech > 100, `${rate} Hz: the frames compared include speech (${speech} over 0.5)`)
    }
  }
})

// One-Conv models built here, so every form of the rewrite is checked against onnxruntime's own Conv.

const FLOAT = 1
const TYPE = { tensorType: 1 } as const
const TENSOR_TYPE = { elemType: 1, shape: 2 } as const
const SHAPE = { dim: 1 } as const
const DIM = { value: 1, param: 2 } as const

function valueInfo(name: string, dims: readonly (number | string)[] | undefined): Uint8Array {
  const shape =
    dims === undefined
      ? []
      : [
          bytesField(
            TENSOR_TYPE.shape,
            encodeFields(
              dims.map((d) =>
                bytesField(SHAPE.dim, encodeFields([typeof d === 'number' ? varintField(DIM.value, d) : stringField(DIM.param, d)])),
              ),
            ),
          ),
        ]
  const tensorType = encodeFields([varintField(TENSOR_TYPE.elemType, FLOAT), ...shape])
  return encodeFields([stringField(1, name), bytesField(2, encodeFields([bytesField(TYPE.tensorType, tensorType)]))])
}

function floatConstant(output: string, dims: readonly number[], values: Float32Array): WireField {
  const tensor = encodeFields([
    ...dims.map((d) => varintField(1, d)),
    varintField(2, FLOAT),
    bytesField(9, new Uint8Array(values.buffer, values.byteOffset, values.byteLength)),
  ])
  return onnxNode('Constant', [], [output], `${output}/Constant`, [
    bytesField(
      NODE.attribute,
      encodeFields([stringField(ATTRIBUTE.name, 'value'), bytesField(ATTRIBUTE.t, tensor), varintField(ATTRIBUTE.type, 4)]),
    ),
  ])
}

interface ConvCase {
  cin: number
  cout: number
  k: number
  stride: number
  pads: [number, number]
  bias: boolean
  length: number
  /** Default 1 (other values: a node the rewrite leaves alone). */
  group?: number
}

function random(n: number, seed: number): Float32Array {
  const out = new Float32Array(n)
  let s = seed
  for (let i = 0; i < n; i++) {
    s = (s * 1103515245 + 12345) & 0x7fffffff
    out[i] = s / 0x7fffffff - 0.5
  }
  return out
}

function convModel(c: ConvCase): Uint8Array {
  const group = c.group ?? 1
  const nodes = [floatConstant('w', [c.cout, c.cin / group, c.k], random((c.cout * c.cin * c.k) / group, 7))]
  if (c.bias) nodes.push(floatConstant('b', [c.cout], random(c.cout, 11)))
  nodes.push(
    onnxNode('Conv', c.bias ? ['x', 'w', 'b'] : ['x', 'w'], ['y'], 'conv', [
      intsAttribute('kernel_shape', [c.k]),
      intsAttribute('strides', [c.stride]),
      intsAttribute('pads', c.pads),
      intsAttribute('dilations', [1]),
      intAttribute('group', group),
    ]),
  )
  const graph = encodeFields([
    ...nodes,
    stringField(2, 'conv-test'),
    bytesField(11, valueInfo('x', ['n', c.cin, c.length])),
    bytesField(12, valueInfo('y', undefined)),
  ])
  const opset = encodeFields([stringField(1, ''), varintField(2, 16)])
  return encodeFields([varintField(1, 8), bytesField(MODEL.opsetImport, opset), bytesField(MODEL.graph, graph)])
}

async function runConv(model: Uint8Array, c: ConvCase, n: number): Promise<{ data: Float32Array; dims: readonly number[] }> {
  const session = await ort.InferenceSession.create(model, SESSION)
  try {
    const out = await session.run({ x: new ort.Tensor('float32', random(n * c.cin * c.length, 3), [n, c.cin, c.length]) })
    return { data: out.y!.data as Float32Array, dims: out.y!.dims }
  } finally {
    await session.release()
  }
}

t.test('each form of the rewrite computes what Conv computes', async (t) => {
  const cases: ConvCase[] = [
    { cin: 5, cout: 4, k: 3, stride: 1, pads: [1, 1], bias: true, length: 7 },
    { cin: 5, cout: 4, k: 3, stride: 2, pads: [1, 1], bias: true, length: 8 },
    { cin: 3, cout: 6, k: 3, stride: 2, pads: [1, 1], bias: false, length: 2 },
    { cin: 2, cout: 3, k: 4, stride: 3, pads: [0, 2], bias: true, length: 11 },
    { cin: 4, cout: 1, k: 1, stride: 1, pads: [0, 0], bias: true, length: 1 },
    { cin: 3, cout: 2, k: MAX_SLICES, stride: 1, pads: [2, 0], bias: true, length: 20 },
    // The strided-window form (Silero's STFT): a kernel of several strides, no padding.
    { cin: 1, cout: 6, k: 32, stride: 16, pads: [0, 0], bias: false, length: 80 },
    { cin: 2, cout: 3, k: 36, stride: 12, pads: [0, 0], bias: true, length: 60 },
  ]
  for (const c of cases) {
    const model = convModel(c)
    const folded = foldBatchIntoConvs(model)
    const name = `cin ${c.cin} cout ${c.cout} k ${c.k} stride ${c.stride} pads ${c.pads.join('/')}${c.bias ? ' bias' : ''}`
    t.equal(folded.convs, 1, `${name}: rewritten`)
    for (const n of [1, 3]) {
      const want = await runConv(model, c, n)
      const got = await runConv(folded.model, c, n)
      t.same(got.dims, want.dims, `${name}, batch ${n}: same shape ${want.dims.join('x')}`)
      let max = 0
      for (let i = 0; i < want.data.length; i++) max = Math.max(max, Math.abs(want.data[i]! - got.data[i]!))
      t.ok(want.data.length > 0 && max < 1e-5, `${name}, batch ${n}: same values (max difference ${max})`)
    }
  }
})

t.test('convolutions the rewrite does not handle are left as they are', async (t) => {
  const base: ConvCase = { cin: 4, cout: 4, k: 3, stride: 1, pads: [1, 1], bias: true, length: 6 }
  const grouped = convModel({ ...base, group: 2 })
  const wide = convModel({ ...base, k: MAX_SLICES + 1, pads: [0, 0], length: 40 })
  for (const [name, model] of [
    ['grouped', grouped],
    ['a kernel too wide and not a multiple of its stride', wide],
  ] as const) {
    const r = foldBatchIntoConvs(model)
    t.equal(r.convs, 0, `${name}: not rewritten`)
    t.equal(r.model, model, `${name}: the same bytes come back`)
  }
})
