/** Tones in test audio: how many 20 ms frames of PCM16 samples hold a given frequency (Goertzel), well above silence. */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import wavefile from 'wavefile'

/** 20 ms frames of `pcm` (at `rate`) in which `hz` holds most of the energy and the level is well above silence. */
export function toneFrames(pcm: Int16Array, hz: number, rate = 8000): number {
  const n = rate / 50
  let frames = 0
  for (let at = 0; at + n <= pcm.length; at += n) {
    const frame = pcm.subarray(at, at + n)
    let energy = 0
    for (const s of frame) energy += s * s
    if (Math.sqrt(energy / n) < 500) continue
    if (goertzelPower(frame, hz, rate) / energy > 0.5) frames++
  }
  return frames
}

/** The power of `hz` in `frame` (Goertzel), on the scale of the frame's energy (the sum of its squared samples). */
function goertzelPower(frame: Int16Array, hz: number, rate: number): number {
  const k = 2 * Math.cos((2 * Math.PI * hz) / rate)
  let s1 = 0
  let s2 = 0
  for (const x of frame) {
    const s0 = x + k * s1 - s2
    s2 = s1
    s1 = s0
  }
  return (s1 * s1 + s2 * s2 - k * s1 * s2) / (frame.length / 2)
}

/** Root mean square of PCM16 samples (0 for none). */
export function rms(samples: Int16Array): number {
  let sum = 0
  for (const s of samples) sum += s * s
  return Math.sqrt(sum / Math.max(1, samples.length))
}

/**
 * A SIP phone's microphone for tests: a folder of its own (removed at teardown) holding 20 s of near silence,
 * 8 kHz mono PCM16 (a phone that plays a file ends its call when the file ends).
 */
export function quietMicrophone(test: { teardown(fn: () => void): void }, prefix: string): { dir: string; microphone: string } {
  const dir = mkdtempSync(join(tmpdir(), prefix))
  test.teardown(() => rmSync(dir, { recursive: true, force: true }))
  const microphone = join(dir, 'quiet.wav')
  const wav = new wavefile.WaveFile()
  wav.fromScratch(1, 8000, '16', new Int16Array(8000 * 20).fill(3))
  writeFileSync(microphone, wav.toBuffer())
  return { dir, microphone }
}

/**
 * Frames (20 ms) of `pcm` holding every one of `hzs` together (a dual tone: each frequency carries at least a fifth
 * of the frame's energy, by Goertzel) and well above silence; `quiet` counts the near-silent frames and
 * `longestRun` the longest stretch of consecutive tone frames (a cadence's burst).
 */
export function dualToneFrames(pcm: Int16Array, hzs: readonly number[], rate = 8000): { tone: number; quiet: number; longestRun: number } {
  const n = (rate * 20) / 1000
  let tone = 0
  let quiet = 0
  let run = 0
  let longestRun = 0
  for (let at = 0; at + n <= pcm.length; at += n) {
    const frame = pcm.subarray(at, at + n)
    let energy = 0
    for (const s of frame) energy += s * s
    if (Math.sqrt(energy / n) < 100) {
      quiet++
      run = 0
      continue
    }
    const holds = hzs.every((hz) => goertzelPower(frame, hz, rate) >= energy / 5)
    if (holds) {
      tone++
      run++
      longestRun = Math.max(longestRun, run)
    } else run = 0
  }
  return { tone, quiet, longestRun }
}
