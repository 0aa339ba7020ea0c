/**
 * The ringback tone a caller hears while a warm transfer rings the human (no `hold` line asked for): the tone of
 * the caller's country, so the wait sounds like the call it is. Pure: 20 ms PCM16 frames from a formula.
 *
 * - North America (+1, the NANP): 440 + 480 Hz, 2 s on, 4 s off (the precise tone plan, ANSI T1.401).
 * - United Kingdom (+44): 400 + 450 Hz, 0.4 s on, 0.2 s off, 0.4 s on, 2 s off (the double ring).
 * - Elsewhere, and a caller without a number: 425 Hz, 1 s on, 4 s off (ITU-T E.180's recommended ringing tone,
 *   which most of Europe uses).
 *
 * Each tone is -16 dBFS per frequency (a sum peaks near -10 dBFS, below speech), with 5 ms ramps at each edge so
 * the cadence does not click.
 */

/** A country's ringback: frequencies, and the cadence as on/off ms pairs within one period. */
export interface RingbackPlan {
  readonly name: 'nanp' | 'uk' | 'itu'
  readonly hz: readonly number[]
  /** [on ms, off ms] pairs, repeated in order. */
  readonly cadence: readonly (readonly [number, number])[]
}

export const RINGBACK_PLANS = {
  nanp: { name: 'nanp', hz: [440, 480], cadence: [[2000, 4000]] },
  uk: {
    name: 'uk',
    hz: [400, 450],
    cadence: [
      [400, 200],
      [400, 2000],
    ],
  },
  itu: { name: 'itu', hz: [425], cadence: [[1000, 4000]] },
} as const satisfies Record<string, RingbackPlan>

/** Length of one frame handed out. */
export const RINGBACK_FRAME_MS = 20
const LEVEL = 32767 * 10 ** (-16 / 20)
const RAMP_MS = 5

/** The plan for a caller's E.164 number (undefined: none known). */
export function ringbackPlanFor(number: string | undefined): RingbackPlan {
  if (number?.startsWith('+1')) return RINGBACK_PLANS.nanp
  if (number?.startsWith('+44')) return RINGBACK_PLANS.uk
  return RINGBACK_PLANS.itu
}

/** Frame `index` (20 ms each, from the start of the ringing) of `plan` at `rate` Hz. */
export function ringbackFrame(plan: RingbackPlan, rate: number, index: number): Int16Array {
  const n = (rate * RINGBACK_FRAME_MS) / 1000
  const out = new Int16Array(n)
  const period = plan.cadence.reduce((sum, [on, off]) => sum + on + off, 0)
  for (let i = 0; i < n; i++) {
    const sample = index * n + i
    const tMs = (sample * 1000) / rate
    const envelope = gate(plan, tMs % period)
    if (envelope === 0) continue
    const t = sample / rate
    let v = 0
    for (const hz of plan.hz) v += Math.sin(2 * Math.PI * hz * t)
    out[i] = Math.round(LEVEL * envelope * v)
  }
  return out
}

/** 0 in a gap, 1 in a tone, a linear ramp over the first and last `RAMP_MS` of each tone. */
function gate(plan: RingbackPlan, atMs: number): number {
  let start = 0
  for (const [on, off] of plan.cadence) {
    if (atMs < start + on) {
      const into = atMs - start
      return Math.min(1, into / RAMP_MS, (on - into) / RAMP_MS)
    }
    start += on + off
    if (atMs < start) return 0
  }
  return 0
}
