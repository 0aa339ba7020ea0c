/**
 * Recording of a browser session in Chromium: the demo page speaks into the microphone (a WAV file), the agent
 * replies; the WAV downloaded afterwards (parsed with `wavefile`) holds the microphone in the left channel where
 * the gateway received it and the reply in the right one from when it was sent, at 16 kHz, as long as the session.
 */
import t from 'tap'
import { toolSkip } from '../helpers/tool-required.js'
import wavefile from 'wavefile'
import { HEARD, skipReason, startE2e } from './e2e-harness.js'

const RATE = 16_000
const at = (ms: number) => Math.round((ms * RATE) / 1000)
function rms(a: Int16Array, step = 1): number {
  let sum = 0
  let n = 0
  for (let i = 0; i < a.length; i += step) {
    sum += (a[i] as number) ** 2
    n++
  }
  return n === 0 ? 0 : Math.sqrt(sum / n)
}

const skip = toolSkip(skipReason()) || undefined
if (skip !== undefined) {
  t.plan(0, skip)
} else {
  const e2e = await startE2e()
  t.teardown(() => e2e.close())
  const org = await e2e.gw.request('PATCH', `/admin/v1/organizations/${e2e.gw.orgId}`, { admin: true, body: { recording_enabled: true } })
  if (org.status !== 200) throw new Error(org.text)

  t.test('a recorded browser session: microphone left, reply right, 16 kHz, the session long', async (t) => {
    const page = await e2e.openDemo()
    const socket = e2e.sockets.length - 1
    await e2e.waitForRequest((r) => r.json?.type === 'message' && r.json.text === HEARD)
    await page.waitForFunction(() => globalThis.voxgateDemo.audioPlayedMs > 500, undefined, { timeout: 20_000 })
    const row = await e2e.sessionOf(page)
    const db = e2e.gw.store.db
    t.equal((await e2e.gw.request('GET', `/v1/agents/${e2e.agentId}/sessions/${row.id}`)).body.recording_status, 'in_progress')
    await page.context().close()

    const { details, wav: file } = await e2e.finishedRecording(row.id)
    t.equal(details.recording_status, 'completed')
    t.equal(details.recording_url, `${e2e.gw.config.publicUrl}/v1/agents/${e2e.agentId}/sessions/${row.id}/recording`)
    t.ok(file !== undefined, 'the recording downloads')
    const wav = new wavefile.WaveFile(file ?? Buffer.alloc(0))
    t.match(wav.fmt, { numChannels: 2, sampleRate: RATE, bitsPerSample: 16 })
    const [left, right] = wav.getSamples(false, Int16Array) as unknown as [Int16Array, Int16Array]
    const ended = await db.selectFrom('sessions').selectAll().where('id', '=', row.id).executeTakeFirstOrThrow()
    const startedAt = ended.started_at?.getTime() ?? 0
    const sessionMs = (ended.ended_at?.getTime() ?? 0) - startedAt
    t.ok(Math.abs((left.length * 1000) / RATE - sessionMs) <= 100, `WAV ${(left.length * 1000) / RATE} ms vs session ${sessionMs} ms`)

    // The microphone: a frame of speech as the gateway received it, found in the left channel at its time.
    const frames = e2e.audioIn.filter((f) => f.socket === socket)
    const pcm8k = (b: Buffer) => new Int16Array(b.buffer.slice(b.byteOffset, b.byteOffset + b.length))
    const loud = frames.findIndex((f) => rms(pcm8k(f.pcm)) > 1000)
    t.ok(loud >= 0, 'speech reached the gateway')
    // No timestamps on the browser's wire: the microphone captures continuously, so its media time is the audio
    // received so far, and arrivals can only be late: the stream's zero is the earliest any arrival allows (until a
    // pause of over half a second starts it again). Audio sits at zero + media time; when a later arrival lowers the
    // zero, audio not yet written moves back with it, and audio already written keeps its place, its tail overwritten
    // by the audio after it (by at most how far the zero fell). So a frame sits between zero + media time as of its
    // arrival and the lowest zero of its stretch of microphone audio + media time, and only its head is sure to be
    // there: the frame minus that fall (and the recorder's 3 ms snap).
    let zero = Number.POSITIVE_INFINITY
    let media = 0
    const placed: { k: number; mediaStart: number; zeroAtArrival: number }[] = []
    for (const [k, f] of frames.entries()) {
      media += f.pcm.length / 16
      const arrived = f.at - startedAt
      if (arrived - (zero + media) > 500) {
        if (k > loud) break
        zero = Number.POSITIVE_INFINITY
        placed.length = 0
      }
      zero = Math.min(zero, arrived - media)
      if (k >= loud) placed.push({ k, mediaStart: media - f.pcm.length / 16, zeroAtArrival: zero })
    }
    // The first loud frame whose sure head still holds speech (the first loud frame is often the onset, loud only at
    // its end, which is the part a later arrival may overwrite).
    const candidate = placed
      .map((p) => {
        const samples = pcm8k((frames[p.k] as (typeof frames)[number]).pcm)
        const head = samples.subarray(0, Math.max(0, samples.length - Math.ceil((p.zeroAtArrival - zero + 3) * 8)))
        return { ...p, head, settled: zero + p.mediaStart, expected: p.zeroAtArrival + p.mediaStart }
      })
      .find((c) => c.head.length >= 8 * 40 && rms(c.head) > 1000)
    if (e2e.throttled.has(socket)) {
      // On a starved machine Chromium sends a backlog faster than real time and the gateway drops some of it: what
      // was received is then not what was recorded, and the comparison below would measure nothing.
      t.comment('microphone audio was throttled on this run: its placement is not compared')
    } else if (t.ok(candidate !== undefined, 'a loud frame of at least 40 ms that later audio cannot overwrite') && candidate) {
      const { head: needle8k, settled, expected } = candidate
      // The left channel at 8 kHz (every other sample of the 16 kHz upsampling) against what was received.
      let best = { lagMs: Number.NaN, score: -1 }
      const n = needle8k.length
      let nn = 0
      for (let i = 0; i < n; i++) nn += (needle8k[i] as number) ** 2
      for (let lag = Math.max(0, at(settled - 300)); lag <= at(expected + 300); lag++) {
        let dot = 0
        let hh = 0
        for (let i = 0; i < n; i++) {
          const h = left[lag + i * 2] ?? 0
          dot += h * (needle8k[i] as number)
          hh += h * h
        }
        const score = hh === 0 ? 0 : dot / Math.sqrt(hh * nn)
        if (score > best.score) best = { lagMs: (lag * 1000) / RATE, score }
      }
      t.ok(best.score > 0.8, `the microphone audio is in the left channel (correlation ${best.score.toFixed(3)}, ${n / 8} ms)`)
      t.ok(
        best.lagMs >= Math.min(settled, expected) - 40 && best.lagMs <= expected + 40,
        `at ${best.lagMs} ms, arrival allows ${settled} to ${expected} ms`,
      )
    }

    // The reply: nothing on the right channel before the first audio was sent, and its sound from then on.
    const out = e2e.audioOut.filter((o) => o.socket === socket)
    t.ok(out.length > 0, 'the agent spoke')
    const firstOut = (out[0]?.at ?? 0) - startedAt
    const totalOutMs = (out.reduce((s, o) => s + o.bytes, 0) / 2 / RATE) * 1000
    t.ok(
      right.subarray(0, at(firstOut - 40)).every((x) => x === 0),
      'the right channel is silent before the reply',
    )
    const during = right.subarray(at(firstOut - 40), at(firstOut + totalOutMs + 40))
    const energy = (a: Int16Array) => a.reduce((s, x) => s + x * x, 0)
    t.ok(energy(during) > 0.99 * energy(right), 'the reply sits where it was sent, as long as it is')
    t.ok(rms(during) > 300, 'the reply is audible')
  })
}
