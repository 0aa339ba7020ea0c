/**
 * Where to cut a long stretch of speech: the start of the quietest `frame`-sample frame (least energy) whose start
 * lies in [from, to), so a word is not cut in two. Pure; frames are aligned to `from`.
 */
export function quietestFrame(samples: Int16Array, from: number, to: number, frame: number): number {
  let best = from
  let bestEnergy = Number.POSITIVE_INFINITY
  const last = Math.min(to, samples.length - frame)
  for (let start = from; start <= last; start += frame) {
    let energy = 0
    for (let i = start; i < start + frame; i++) {
      const s = samples[i]!
      energy += s * s
    }
    if (energy < bestEnergy) {
      bestEnergy = energy
      best = start
    }
  }
  return best
}

/** Root mean square of the samples (0 for none): a segment below a few hundred is silence on any line. */
export function rms(samples: Int16Array): number {
  if (samples.length === 0) return 0
  let sum = 0
  for (let i = 0; i < samples.length; i++) sum += samples[i]! * samples[i]!
  return Math.sqrt(sum / samples.length)
}
