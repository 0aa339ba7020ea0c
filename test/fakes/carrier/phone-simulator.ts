/**
 * A phone on the carrier's network: posts the signed voice hook, follows the markup, and plays
 * the caller over the media stream exactly as the carrier would (Twilio Media Streams wire format).
 */
import { randomBytes } from 'node:crypto'
import { readMarkup, type MarkupVerb } from './markup-reader.js'
import { postSignedForm } from './sign.js'
import { SimulatedCall } from './simulated-call.js'

export { SimulatedCall, type CallEnd, type ReceivedMessage, type SimulatedCallInit } from './simulated-call.js'

/** Options of `placeCall`. */
export interface PlaceCallOptions {
  /** Where to POST the voice hook (the gateway's real address). */
  readonly voiceHookUrl: string
  /** The URL the carrier believes it calls, which it signs (default `voiceHookUrl`). */
  readonly publicUrl?: string
  /** Account auth token; without it no signature header is sent. */
  readonly authToken?: string
  readonly signatureHeader?: string
  readonly accountSid?: string
  readonly from: string
  readonly to: string
  /** `inbound` (default) or `outbound-api` (a call the gateway placed, now answered). */
  readonly direction?: string
  readonly fromCountry?: string
  readonly toCountry?: string
  readonly callSid?: string
  /** Extra voice-hook form fields. */
  readonly extraParams?: Readonly<Record<string, string>>
  /** Mu-law 8 kHz bytes the caller says first. */
  readonly audio?: Buffer
  /** Pace caller audio in real time (default true); false sends it as fast as possible. */
  readonly realtime?: boolean
  /** Send silence while the caller has nothing to say (default: same as `realtime`). */
  readonly silenceWhenIdle?: boolean
  /** Earpiece speed: 1 real time (default when realtime), Infinity instant (default otherwise). */
  readonly playbackSpeed?: number
  /** Map a public URL from the markup (stream URL) to where to connect. */
  readonly rewriteUrl?: (url: string) => string
  readonly signal?: AbortSignal
}

/** What became of a placed call. */
export type PlaceCallResult =
  | { readonly outcome: 'http_error'; readonly status: number; readonly body: string }
  | { readonly outcome: 'bad_markup'; readonly status: number; readonly body: string; readonly error: string }
  | { readonly outcome: 'refused'; readonly markup: string; readonly verbs: MarkupVerb[]; readonly said: string }
  | { readonly outcome: 'stream_error'; readonly markup: string; readonly verbs: MarkupVerb[]; readonly error: string }
  | { readonly outcome: 'connected'; readonly markup: string; readonly verbs: MarkupVerb[]; readonly call: SimulatedCall }

/** A new call sid (`CA` + 32 hex). */
export function newCallSid(): string {
  return `CA${randomBytes(16).toString('hex')}`
}

/** Post the voice hook and, when the markup connects a stream, open and drive it. */
export async function placeCall(options: PlaceCallOptions): Promise<PlaceCallResult> {
  const callSid = options.callSid ?? newCallSid()
  const accountSid = options.accountSid ?? `AC${'0'.repeat(32)}`
  const direction = options.direction ?? 'inbound'
  const form: Record<string, string> = {
    AccountSid: accountSid,
    ApiVersion: '2010-04-01',
    CallSid: callSid,
    CallStatus: direction === 'inbound' ? 'ringing' : 'in-progress',
    Called: options.to,
    Caller: options.from,
    Direction: direction,
    From: options.from,
    To: options.to,
    ...(options.fromCountry ? { FromCountry: options.fromCountry, CallerCountry: options.fromCountry } : {}),
    ...(options.toCountry ? { ToCountry: options.toCountry, CalledCountry: options.toCountry } : {}),
    ...options.extraParams,
  }
  const reply = await postSignedForm({
    postTo: options.voiceHookUrl,
    signedUrl: options.publicUrl ?? options.voiceHookUrl,
    form,
    authToken: options.authToken,
    ...(options.signatureHeader ? { signatureHeader: options.signatureHeader } : {}),
    ...(options.signal ? { signal: options.signal } : {}),
  })
  if (reply.status !== 200) return { outcome: 'http_error', status: reply.status, body: reply.body }
  let verbs: MarkupVerb[]
  try {
    verbs = readMarkup(reply.body)
  } catch (err) {
    return { outcome: 'bad_markup', status: reply.status, body: reply.body, error: (err as Error).message }
  }
  const said: string[] = []
  for (const verb of verbs) {
    if (verb.verb === 'Say') said.push(verb.text)
    if (verb.verb === 'Connect') {
      const realtime = options.realtime ?? true
      let call: SimulatedCall
      try {
        call = await SimulatedCall.connect({
          url: options.rewriteUrl ? options.rewriteUrl(verb.stream.url) : verb.stream.url,
          callSid,
          accountSid,
          customParameters: verb.stream.parameters,
          realtime,
          silenceWhenIdle: options.silenceWhenIdle ?? realtime,
          playbackSpeed: options.playbackSpeed ?? (realtime ? 1 : Infinity),
        })
      } catch (err) {
        return { outcome: 'stream_error', markup: reply.body, verbs, error: (err as Error).message }
      }
      if (options.audio) void call.sendAudio(options.audio)
      return { outcome: 'connected', markup: reply.body, verbs, call }
    }
    if (verb.verb === 'Hangup' || verb.verb === 'Reject') break
  }
  // The document ran out (or hung up) without connecting a stream: the call is over.
  return { outcome: 'refused', markup: reply.body, verbs, said: said.join(' ') }
}
