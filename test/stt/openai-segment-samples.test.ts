import t from 'tap'
import { rms } from '../../pipeline/audio/quietest-frame.js'
import { SegmentSamples } from '../../pipeline/vendors/stt/openai-segment-samples.js'

t.test('pieces gather into one array, grown as needed, with the RMS measured as they came', async (t) => {
  const samples = new SegmentSamples(4)
  const reused = new Int16Array(3)
  const all: number[] = []
  for (let i = 0; i < 5; i++) {
    reused.set([i * 100, -i * 50, 7])
    samples.push(reused)
    all.push(i * 100, -i * 50, 7)
  }
  t.equal(samples.length, 15)
  const taken = samples.take()
  t.strictSame([...taken.samples], all, 'copies: the caller reused its array')
  t.ok(Math.abs(taken.rms - rms(Int16Array.from(all))) < 1e-9, 'the RMS of the whole')
  t.equal(samples.length, 0, 'empty after take')
  samples.push(Int16Array.from([1, 2]))
  t.strictSame([...taken.samples], all, 'what was taken is not overwritten by the next segment')
  t.strictSame([...samples.take().samples], [1, 2])
  t.strictSame(samples.take(), { samples: new Int16Array(0), rms: 0 })
})
