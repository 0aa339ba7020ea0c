import t from 'tap'
import { VadFrameProcessor, VadFrameResult } from '../../pipeline/vad/vad-frame-processor.js'

const base = { positiveSpeechThreshold: 0.5, negativeSpeechThreshold: 0.35, redemptionFrames: 3, minSpeechFrames: 3, preSpeechPadFrames: 2 }

function run(probs: number[], opts = base): { flags: number[]; p: VadFrameProcessor } {
  const p = new VadFrameProcessor(opts)
  return { flags: probs.map((v, i) => p.process(i, v)), p }
}

t.test('speech start, real start, end after redemption frames, with pre-speech pad', async (t) => {
  const { flags, p } = run([0, 0, 0, 0.9, 0.9, 0.9, 0.9, 0.1, 0.1, 0.1, 0])
  t.equal(flags[3], VadFrameResult.SPEECH_START)
  t.equal(flags[5], VadFrameResult.SPEECH_REAL_START)
  t.equal(flags[9], VadFrameResult.SPEECH_END)
  t.same(p.segment, { audioStart: 1, firstSpeech: 3, lastSpeech: 6, end: 9, speechFrames: 4 })
  t.notOk(p.speaking)
})

t.test('frames between the thresholds neither end nor count as speech', async (t) => {
  const { flags } = run([0.9, 0.9, 0.9, 0.4, 0.4, 0.4, 0.4, 0.1, 0.1, 0.1])
  t.equal(flags.indexOf(VadFrameResult.SPEECH_END), 9)
})

t.test('short segments are misfires; the pad never reaches into the previous segment', async (t) => {
  const { flags, p } = run([0.9, 0.9, 0.9, 0, 0, 0, 0.9, 0, 0, 0])
  t.equal(flags[5], VadFrameResult.SPEECH_END)
  t.equal(flags[9], VadFrameResult.MISFIRE)
  t.equal(p.segment.audioStart, 6)
  t.equal(p.endSegment(9), VadFrameResult.NONE)
})

t.test('endSegment closes open speech', async (t) => {
  const { p } = run([0, 0.9, 0.9, 0.9, 0.9])
  t.ok(p.speaking)
  t.equal(p.endSegment(4), VadFrameResult.SPEECH_END)
  t.equal(p.segment.end, 4)
})
