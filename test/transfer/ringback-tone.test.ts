/**
 * The ringback tones: each country's plan by the caller's number, the cadence (tone and silence where the plan
 * says), the level, and ramps that start each burst at zero (no click).
 */
import t from 'tap'
import { RINGBACK_PLANS, ringbackFrame, ringbackPlanFor } from '../../gateway/transfer/ringback-tone.js'
import { dualToneFrames } from '../helpers/tones.js'

const peak = (f: Int16Array) => f.reduce((m, s) => Math.max(m, Math.abs(s)), 0)

t.test('the plan follows the caller number: +1 NANP, +44 UK, the ITU tone otherwise', async (t) => {
  t.equal(ringbackPlanFor('+14155550100').name, 'nanp')
  t.equal(ringbackPlanFor('+442071838750').name, 'uk')
  t.equal(ringbackPlanFor('+33142685300').name, 'itu')
  t.equal(ringbackPlanFor(undefined).name, 'itu')
})

t.test('each plan rings in its cadence, at its frequencies, below speech level', async (t) => {
  for (const [plan, onFrames, offFrame] of [
    [RINGBACK_PLANS.nanp, [0, 50, 99], [100, 150, 299]],
    [RINGBACK_PLANS.uk, [0, 19, 30, 49], [20, 29, 50, 149]],
    [RINGBACK_PLANS.itu, [0, 49], [50, 249]],
  ] as const) {
    for (const i of onFrames) t.ok(peak(ringbackFrame(plan, 8000, i)) > 3000, `${plan.name}: frame ${i} rings`)
    for (const i of offFrame) t.equal(peak(ringbackFrame(plan, 8000, i)), 0, `${plan.name}: frame ${i} is silent`)
    const second = Array.from({ length: 50 }, (_, i) => ringbackFrame(plan, 16000, i + 1))
    const pcm = new Int16Array(second.reduce((n, f) => n + f.length, 0))
    for (const [i, f] of second.entries()) pcm.set(f, i * f.length)
    t.ok(dualToneFrames(pcm, plan.hz, 16000).tone >= 10, `${plan.name}: ${plan.hz.join(' + ')} Hz at 16 kHz too`)
    t.ok(peak(ringbackFrame(plan, 8000, 5)) < 32767 * 10 ** (-9 / 20), `${plan.name}: peaks below -9 dBFS`)
    t.ok(Math.abs(ringbackFrame(plan, 8000, 0)[0]!) < 50, `${plan.name}: a burst starts at zero`)
  }
})
