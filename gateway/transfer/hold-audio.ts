/**
 * The built-in hold audio of a warm transfer: what the caller hears while the human is dialled, briefed
 * and asked to accept. Generated here, so it is license-free and needs no file: a soft two-note chime ("ding-dong",
 * G5 then E5 with a quiet octave partial) every 4 s over a quiet two-note pad that never stops.
 *
 * "Never silent", decided: the pad keeps every 20 ms frame at or above `HOLD_FLOOR_DBFS` (RMS), so a caller who
 * listens between two chimes still hears the line is alive, and a carrier or browser never sees digital silence
 * (some networks insert comfort noise or drop "dead" calls). The chime carries the "you are on hold" message.
 *
 * Pure and deterministic: one 4 s loop per sample rate, computed once from the same formula at 8 and 16 kHz (no
 * resampling), handed out as 20 ms PCM16 frames. The loop joins without a click: the pad completes whole cycles in
 * the period, and each chime note fades in over 8 ms and out to exact zero well before the loop ends.
 */

/** Sample rates the hold audio is made at (the phone leg's 8 kHz, the browser leg's 16 kHz). */
export type HoldSampleRate = 8000 | 16000

/** Length of the loop: a chime every this many ms. */
export const HOLD_PERIOD_MS = 4000
/** Length of one frame handed out. */
export const HOLD_FRAME_MS = 20
/** Peak level of the loop (the chime's loudest sample): soft beside speech, which peaks near -3 dBFS. */
export const HOLD_PEAK_DBFS = -18
/** The quietest any 20 ms frame gets (RMS): the pad's trough. */
export const HOLD_FLOOR_DBFS = -45
/** Onsets of the chime's notes within the loop, in ms. */
export const HOLD_CHIME_ONSETS_MS = [0, 450] as const

const FULL_SCALE = 32767
// Whole numbers of hertz complete whole cycles in 4 s: the pad joins itself exactly at the loop's end.
const CHIME_HZ = [784, 659] as const
const PAD_HZ = [392, 494] as const
/** The pad's peak before the final normalisation, as a fraction of full scale (-32 dBFS). */
const PAD_PEAK = 10 ** (-32 / 20)
const ATTACK_S = 0.008
const DECAY_S = 0.4
/** Each note fades out over [FADE_START_S, FADE_END_S] after its onset and is exactly zero after. */
const FADE_START_S = 1.6
const FADE_END_S = 2.2

const loops = new Map<HoldSampleRate, Int16Array>()

/** One whole loop at `sampleRate` (computed once, then shared: do not write to it). */
export function holdAudioLoop(sampleRate: HoldSampleRate): Int16Array {
  let loop = loops.get(sampleRate)
  if (loop === undefined) {
    loop = synthesize(sampleRate)
    loops.set(sampleRate, loop)
  }
  return loop
}

/** Samples in one 20 ms frame at `sampleRate`. */
export function holdFrameSamples(sampleRate: HoldSampleRate): number {
  return (sampleRate * HOLD_FRAME_MS) / 1000
}

/** Frames in one loop (200). */
export const HOLD_PERIOD_FRAMES = HOLD_PERIOD_MS / HOLD_FRAME_MS

/**
 * The `index`th 20 ms frame of the endless hold audio (frame 0 starts the loop, at a zero crossing of the pad, so
 * starting is click-free too). A view into the shared loop: copy it to change it.
 */
export function holdAudioFrame(sampleRate: HoldSampleRate, index: number): Int16Array {
  const n = holdFrameSamples(sampleRate)
  const at = (((index % HOLD_PERIOD_FRAMES) + HOLD_PERIOD_FRAMES) % HOLD_PERIOD_FRAMES) * n
  return holdAudioLoop(sampleRate).subarray(at, at + n)
}

function synthesize(sampleRate: HoldSampleRate): Int16Array {
  const length = (sampleRate * HOLD_PERIOD_MS) / 1000
  const pad = new Float64Array(length)
  const chime = new Float64Array(length)
  let chimePeak = 0
  for (let i = 0; i < length; i++) {
    const t = i / sampleRate
    // A slow swell (one cycle per loop) between 60% and 100% keeps the pad from sounding like a stuck tone.
    const swell = 0.8 - 0.2 * Math.cos((2 * Math.PI * t * 1000) / HOLD_PERIOD_MS)
    pad[i] = (PAD_PEAK * swell * (Math.sin(2 * Math.PI * PAD_HZ[0] * t) + Math.sin(2 * Math.PI * PAD_HZ[1] * t))) / 2
    let c = 0
    for (let k = 0; k < CHIME_HZ.length; k++) {
      const u = t - HOLD_CHIME_ONSETS_MS[k]! / 1000
      const f = CHIME_HZ[k]!
      if (u >= 0) c += envelope(u) * (Math.sin(2 * Math.PI * f * u) + 0.3 * Math.sin(4 * Math.PI * f * u))
    }
    chime[i] = c
    chimePeak = Math.max(chimePeak, Math.abs(c))
  }
  const target = 10 ** (HOLD_PEAK_DBFS / 20)
  const mixed = new Float64Array(length)
  let peak = 0
  for (let i = 0; i < length; i++) {
    mixed[i] = pad[i]! + (chime[i]! / chimePeak) * (target - PAD_PEAK)
    peak = Math.max(peak, Math.abs(mixed[i]!))
  }
  // The pad and the chime rarely peak together: scale the mix so its own peak is exactly the target.
  const out = new Int16Array(length)
  for (let i = 0; i < length; i++) out[i] = Math.round((mixed[i]! / peak) * target * FULL_SCALE)
  return out
}

/** A note's level `u` s after its onset: a raised-sine attack, an exponential decay, a raised-cosine fade to zero. */
function envelope(u: number): number {
  if (u >= FADE_END_S) return 0
  const attack = u < ATTACK_S ? Math.sin((Math.PI / 2) * (u / ATTACK_S)) ** 2 : 1
  const fade = u <= FADE_START_S ? 1 : 0.5 + 0.5 * Math.cos((Math.PI * (u - FADE_START_S)) / (FADE_END_S - FADE_START_S))
  return attack * Math.exp(-u / DECAY_S) * fade
}
