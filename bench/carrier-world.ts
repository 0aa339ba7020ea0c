// The outside world of the carrier and SIP benchmarks, in its own process: speech-vendor fakes, the customer
// backend and N simulated phones (carrier media streams, or SIP calls with RTP). Driven by its parent over IPC, so
// the gateway's process is measured alone.
import { startFakeDeepgram } from '../test/fakes/deepgram/fake-deepgram.js'
import { startFakeElevenLabs } from '../test/fakes/elevenlabs/fake-elevenlabs.js'
import { startFakeBackend } from '../test/fakes/backend/fake-backend.js'
import { placeCall, type SimulatedCall } from '../test/fakes/carrier/phone-simulator.js'
import { callerSpeech } from '../test/helpers/sipp.js'
import { BenchSipPhone, pacer } from './sip-bench-phone.js'

type Target = { gatewayUrl: string; number: string; publicUrl: string }
type Command =
  | ({ cmd: 'call'; calls: number } & Target)
  /** Keeps `calls` calls live: each hangs up after minLifeMs..maxLifeMs and a new one takes its place (the soak). */
  | ({ cmd: 'churn'; calls: number; minLifeMs: number; maxLifeMs: number } & Target)
  /** `calls` SIP calls to the gateway's SIP address, their requests paced at `requestsPerSecond`; `tls`: SIP over TLS to
   * that port (trusting `ca`) with SDES-SRTP media; `comfortNoise`: the phones offer CN (RFC 3389). */
  | {
      cmd: 'sip-call'
      calls: number
      host: string
      port: number
      number: string
      requestsPerSecond: number
      tls?: { port: number; ca: string }
      comfortNoise?: boolean
    }
  /** The longest gap between the gateway's RTP packets any SIP phone heard since the last ask. */
  | { cmd: 'rtp-gaps' }
  | { cmd: 'turns' }
  | { cmd: 'stats' }
  | { cmd: 'hangup' }

const send = (m: unknown) => process.send?.(m)
// Every turn the gateway finalizes has words, so it goes on to the backend, TTS and back to the phone.
const deepgram = await startFakeDeepgram({ apiKey: 'k', finalizeTranscript: 'I would like to check on my order' })
const elevenlabs = await startFakeElevenLabs({ apiKey: 'k', msPerChar: 20, chunkMs: 100, chunkIntervalMs: 0 })
const backend = await startFakeBackend({ secret: 'not-checked' })
backend.reply = (request) => ({
  kind: 'sse',
  steps: [
    { data: { type: 'response.tts', content: 'Sure, let me look that up for you. ', turn_id: request.json?.turn_id } },
    { data: { type: 'response.tts', content: 'One moment please.', turn_id: request.json?.turn_id } },
    { data: { type: 'response.end', turn_id: request.json?.turn_id } },
  ],
})
send({ ready: true, deepgram: deepgram.url, elevenlabs: elevenlabs.url, backend: backend.url })

const speech = callerSpeech()
/** What the world does with a phone of either kind. */
interface Phone extends Pick<SimulatedCall, 'isOpen' | 'sendAudio' | 'framesSent'> {
  hangup(): Promise<unknown>
}
const phones: Phone[] = []
const sipPhones: BenchSipPhone[] = []
let stopping = false
const talking: Promise<void>[] = []

/** Calls the churn placed, those that did not connect, and those the gateway ended before the caller did. */
const churn = { placed: 0, failed: 0, endedByGateway: 0 }

function dial(m: Target) {
  const wsBase = m.gatewayUrl.replace(/^http/, 'ws')
  const rewrite = (u: string) => u.replace(m.publicUrl, m.gatewayUrl).replace(m.publicUrl.replace(/^http/, 'ws'), wsBase)
  return placeCall({
    voiceHookUrl: `${m.gatewayUrl}/v1/agents/carrier/twiml`,
    publicUrl: `${m.publicUrl}/v1/agents/carrier/twiml`,
    from: '+442071838750',
    to: m.number,
    rewriteUrl: rewrite,
    realtime: true,
    silenceWhenIdle: true,
    playbackSpeed: 1,
  })
}

/**
 * The loopback address of secure caller `i`: 30 a source, since the SIP endpoint takes 32 TCP/TLS connections at most
 * from one address and each test phone has a connection of its own (a carrier would carry them all on a few).
 */
function secureCallerAddress(i: number): string {
  return `127.0.0.${1 + Math.floor(i / 30)}`
}

/** Phone `i` talks, the phrase in a loop, until it or the gateway hangs up; everyone starts within a second. */
function talk(phone: Phone, i: number): void {
  talking.push(
    (async () => {
      await new Promise((res) => setTimeout(res, (i * 37) % 1000))
      while (!stopping && phone.isOpen) await phone.sendAudio(speech)
    })(),
  )
}

/** One slot of the churn: a call that talks for its lifetime, hangs up, and is replaced, until stopping. */
async function churnSlot(m: Extract<Command, { cmd: 'churn' }>, slot: number): Promise<void> {
  await new Promise((res) => setTimeout(res, (slot * 97) % 5000))
  while (!stopping) {
    churn.placed += 1
    const r = await dial(m).catch(() => undefined)
    if (r?.outcome !== 'connected') {
      churn.failed += 1
      await new Promise((res) => setTimeout(res, 1000))
      continue
    }
    const phone = r.call
    phones.push(phone)
    const life = m.minLifeMs + Math.random() * (m.maxLifeMs - m.minLifeMs)
    const until = Date.now() + life
    while (!stopping && phone.isOpen && Date.now() < until) await phone.sendAudio(speech)
    if (phone.isOpen) await phone.hangup()
    else if (!stopping) churn.endedByGateway += 1
    phones.splice(phones.indexOf(phone), 1)
  }
}

// The bench process that forked this world ended (finished, or crashed before its stop command): so does the world,
// or its phones keep calling and its ports stay taken.
process.on('disconnect', () => process.exit(0))

process.on('message', (m: Command) => {
  void (async () => {
    if (m.cmd === 'churn') {
      for (let i = 0; i < m.calls; i++) talking.push(churnSlot(m, i))
      send({ churning: m.calls })
    } else if (m.cmd === 'stats') {
      send({ stats: { ...churn, live: phones.filter((p) => p.isOpen).length, turns: backend.requests.length } })
    } else if (m.cmd === 'call') {
      for (let i = 0; i < m.calls; i++) {
        const r = await dial(m)
        if (r.outcome !== 'connected') throw new Error(`call ${i} not connected: ${r.outcome}`)
        const phone = r.call
        phones.push(phone)
        talk(phone, i)
      }
      send({ connected: phones.length })
    } else if (m.cmd === 'sip-call') {
      // Two requests a call (INVITE, ACK) on the pace; each phone then talks as the carrier phones do.
      const pace = pacer(m.requestsPerSecond / 2)
      const dialled = await Promise.allSettled(
        Array.from({ length: m.calls }, (_, i) =>
          BenchSipPhone.dial(
            { host: m.host, port: m.port },
            m.number,
            pace,
            m.tls && { ...m.tls, address: secureCallerAddress(i) },
            m.comfortNoise === true,
          ),
        ),
      )
      for (const d of dialled) if (d.status === 'fulfilled') sipPhones.push(d.value)
      phones.push(...sipPhones)
      for (const [i, phone] of sipPhones.entries()) talk(phone, i)
      send({ connected: sipPhones.length, failed: m.calls - sipPhones.length })
    } else if (m.cmd === 'rtp-gaps') {
      send({ worstGapMs: Math.max(0, ...sipPhones.map((p) => p.takeWorstGap())) })
    } else if (m.cmd === 'turns') {
      // Agent webhook requests so far: one per user turn the gateway recognised and sent on. And the 20 ms audio
      // frames the phones sent: a world starved of CPU sends fewer than real time, and the load drops with them.
      send({ turns: backend.requests.length, frames: phones.reduce((n, p) => n + p.framesSent, 0) })
    } else {
      stopping = true
      await Promise.all(phones.map((p) => p.hangup()))
      await Promise.allSettled(talking)
      await Promise.all([deepgram.close(), elevenlabs.close(), backend.close()])
      send({ done: true })
      process.exit(0)
    }
  })().catch((e: unknown) => {
    send({ error: String(e) })
    process.exit(1)
  })
})
