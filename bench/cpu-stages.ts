// Where a gateway's CPU goes, by stage of a call: a V8 CPU profile of this process over a benchmark's
// measurement window (node:inspector, 1 ms samples), each busy sample given to the stage of the nearest frame
// that names one, walking from the sampled function up its stack (so a socket write under the STT sender is "STT
// send", the same write under the Postgres driver "database"). `CARRIER_BENCH_PROFILE=DIR` turns it on in
// `carrier-calls`; `npx tsx bench/cpu-stages.ts FILE.cpuprofile` reads a profile written before (or by
// `node --cpu-prof`).
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs'
import { Session } from 'node:inspector/promises'
import { dirname } from 'node:path'
import { fileURLToPath } from 'node:url'

interface ProfileNode {
  id: number
  callFrame: { functionName: string; url: string }
  children?: number[]
}

/** A V8 CPU profile (the `.cpuprofile` format). */
export interface CpuProfile {
  nodes: ProfileNode[]
  samples: number[]
  timeDeltas: number[]
}

/**
 * Stages in the order they are tried at each frame. Our files by folder, and the packages that are a stage's
 * own work (the Postgres driver, onnxruntime, undici); generic frames (Node's streams, ws) match nothing, so their
 * time goes to the caller's stage.
 */
const STAGES: readonly (readonly [string, RegExp])[] = [
  ['recording', /gateway\/sessions\/recording\/|gateway\/store\/recordings/],
  ['database', /node_modules\/(pg|pg-[a-z-]+|kysely|kysely-[a-z-]+|postgres-[a-z-]+)\/|gateway\/store\//],
  ['VAD', /node_modules\/onnxruntime|pipeline\/vad\//],
  // The vendor socket's binary messages are caller audio (TTS requests are JSON).
  ['STT send', /pipeline\/stt\/|^sendBinary .*pipeline\/vendor\//],
  ['webhook (request, SSE)', /pipeline\/agent\/|gateway\/webhooks\/|node_modules\/(undici|eventsource-parser)\/|undici/],
  ['TTS receive', /pipeline\/tts\//],
  ['marks and playout', /^(#onMark|markPlayed) |pipeline\/voice\/(replies|reply-playout)/],
  ['G.711', /g711/],
  ['resample', /resampler/],
  ['base64', /media-codec/],
  ['frame parse', /media-frame-scanner|node_modules\/ws\/lib\/receiver/],
  ['media out (frames to the carrier)', /^(#send|#queue|#clear) .*transports\/media-stream/],
  ['transport and session', /transports\/|gateway\/sessions\/|carrier\//],
  ['pipeline, other', /pipeline\//],
  ['garbage collector', /^\(garbage collector\)/],
  ['benchmark harness', /\/bench\//],
]

/** Share of the busy samples per stage, largest first; `busyMs` is the profile's non-idle time. */
export function stageShares(profile: CpuProfile): { busyMs: number; stages: { stage: string; share: number }[] } {
  const byId = new Map(profile.nodes.map((n) => [n.id, n]))
  const parent = new Map<number, number>()
  for (const n of profile.nodes) for (const c of n.children ?? []) parent.set(c, n.id)
  const stageOf = new Map<number, string>()
  const find = (leaf: number): string => {
    const known = stageOf.get(leaf)
    if (known !== undefined) return known
    let stage = 'Node and the event loop'
    for (let id: number | undefined = leaf; id !== undefined; id = parent.get(id)) {
      const f = (byId.get(id) as ProfileNode).callFrame
      const label = `${f.functionName} ${f.url}`
      const hit = STAGES.find(([, re]) => re.test(label))
      if (hit !== undefined) {
        stage = hit[0]
        break
      }
    }
    stageOf.set(leaf, stage)
    return stage
  }
  const us = new Map<string, number>()
  let busy = 0
  for (let i = 0; i < profile.samples.length; i++) {
    const leaf = profile.samples[i] as number
    const name = (byId.get(leaf) as ProfileNode).callFrame.functionName
    if (name === '(idle)' || name === '(root)') continue
    const dt = profile.timeDeltas[i] ?? 0
    busy += dt
    const stage = find(leaf)
    us.set(stage, (us.get(stage) ?? 0) + dt)
  }
  const stages = [...us].map(([stage, t]) => ({ stage, share: busy === 0 ? 0 : t / busy })).sort((a, b) => b.share - a.share)
  return { busyMs: busy / 1000, stages }
}

/** A markdown table of `stageShares`. */
export function stageTable(profile: CpuProfile): string {
  const { busyMs, stages } = stageShares(profile)
  const lines = ["| Stage | Share of the gateway thread's busy time |", '| --- | --- |']
  for (const s of stages) lines.push(`| ${s.stage} | ${(100 * s.share).toFixed(1)}% |`)
  lines.push(`(${(busyMs / 1000).toFixed(1)} s of busy samples)`)
  return lines.join('\n')
}

/** Profiles this process until `stop()`, which writes `file` and returns the profile. */
export async function startProfile(file: string): Promise<{ stop(): Promise<CpuProfile> }> {
  const session = new Session()
  session.connect()
  await session.post('Profiler.enable')
  await session.post('Profiler.setSamplingInterval', { interval: Number(process.env.CARRIER_BENCH_PROFILE_US ?? 1000) })
  await session.post('Profiler.start')
  // Beside it, where the thread allocates (sampled every 32 KiB): what the garbage collector has to clean up.
  await session.post('HeapProfiler.enable')
  await session.post('HeapProfiler.startSampling', {
    samplingInterval: 32768,
    includeObjectsCollectedByMajorGC: true,
    includeObjectsCollectedByMinorGC: true,
  })
  return {
    async stop() {
      const { profile } = (await session.post('Profiler.stop')) as unknown as { profile: CpuProfile }
      const heap = (await session.post('HeapProfiler.stopSampling')) as unknown as { profile: unknown }
      session.disconnect()
      mkdirSync(dirname(file), { recursive: true })
      writeFileSync(file, JSON.stringify(profile))
      writeFileSync(`${file.replace(/\.cpuprofile$/, '')}.heapprofile`, JSON.stringify(heap.profile))
      return profile
    },
  }
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  for (const file of process.argv.slice(2)) {
    console.log(`## ${file}\n`)
    console.log(stageTable(JSON.parse(readFileSync(file, 'utf8')) as CpuProfile))
  }
}
