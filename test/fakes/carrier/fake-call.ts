/**
 * One call placed through the fake Calls API, driven the way the carrier drives it: signed status
 * callbacks (initiated, ringing, then answered -> voice hook + media stream -> completed, or a
 * busy / no-answer / failed / canceled end).
 */
import { performance } from 'node:perf_hooks'
import { setTimeout as delay } from 'node:timers/promises'
import { readMarkup } from './markup-reader.js'
import { placeCall, SimulatedCall, type PlaceCallResult } from './phone-simulator.js'
import { postSignedForm } from './sign.js'

/** How a created call proceeds. */
export type CallOutcome =
  | {
      readonly kind: 'answer'
      /** Callee audio (mu-law 8 kHz) spoken once the stream is up. */
      readonly audio?: Buffer
      readonly realtime?: boolean
      readonly silenceWhenIdle?: boolean
      readonly playbackSpeed?: number
      readonly fromCountry?: string
      readonly toCountry?: string
      /**
       * With asynchronous machine detection asked for: the `AnsweredBy` the carrier posts to the AMD callback
       * `amdAfterMs` after the callee's audio began (default: no verdict is posted).
       */
      readonly answeredBy?: string
      readonly amdAfterMs?: number
    }
  | { readonly kind: 'busy' | 'no-answer' | 'failed' | 'canceled' }
  /** Nothing happens after `queued`; the test drives the call. */
  | { readonly kind: 'manual' }

/** One status callback the fake posted. */
export interface CallbackRecord {
  readonly callStatus: string
  readonly form: Record<string, string>
  /** HTTP status of the reply, or the network error message. */
  readonly reply: number | string
  readonly at: number
}

/** What the fake call needs from its API server. */
export interface FakeCallContext {
  readonly accountSid: string
  readonly authToken: string
  readonly stepMs: number
  readonly signatureHeader: string
  readonly rewriteUrl: (url: string) => string
}

/** Parameters the call was created with. */
export interface FakeCallParams {
  readonly sid: string
  readonly to: string
  readonly from: string
  readonly url: string
  /** Markup given at creation (`Twiml`): followed when answered instead of asking the voice hook. */
  readonly twiml?: string | undefined
  readonly statusCallback: string | undefined
  readonly statusCallbackEvents: readonly string[]
  readonly timeoutSec: number | undefined
  /** `MachineDetection` as created (`Enable`, `DetectMessageEnd`), with `AsyncAmd` and its callback. */
  readonly machineDetection?: string | undefined
  readonly asyncAmdCallback?: string | undefined
}

const SIP_CODES: Record<string, string> = { busy: '486', 'no-answer': '487', canceled: '487', failed: '500' }

/** A call in the fake carrier. */
export class FakeCall {
  readonly params: FakeCallParams
  readonly callbacks: CallbackRecord[] = []
  /** Machine detection callbacks posted. */
  readonly amdCallbacks: CallbackRecord[] = []
  status = 'queued'
  /** The phone's side once the callee answered. */
  phone: PlaceCallResult | undefined
  /** Markup documents the call was updated with (a transfer), in order. */
  readonly updates: string[] = []
  /** Resolves when the call reached a final status. */
  readonly done: Promise<string>
  readonly #ctx: FakeCallContext
  readonly #abort = new AbortController()
  #resolveDone: (status: string) => void = () => undefined
  #answeredAt: number | undefined
  #hangupRequested = false
  #seq = 0

  constructor(params: FakeCallParams, ctx: FakeCallContext) {
    this.params = params
    this.#ctx = ctx
    this.done = new Promise((resolve) => {
      this.#resolveDone = resolve
    })
  }

  /** The call's sid (`CA` + 32 hex). */
  get sid(): string {
    return this.params.sid
  }

  /** Run the call to its end according to `outcome`. */
  async drive(outcome: CallOutcome): Promise<void> {
    if (outcome.kind === 'manual') return
    const signal = this.#abort.signal
    try {
      await delay(this.#ctx.stepMs, undefined, { signal })
      await this.progress('initiated')
      await delay(this.#ctx.stepMs, undefined, { signal })
      await this.progress('ringing')
      await delay(this.#ctx.stepMs, undefined, { signal })
    } catch {
      // Aborted by a REST hangup, which already finished the call.
      return
    }
    if (outcome.kind !== 'answer') {
      await this.finish(outcome.kind)
      return
    }
    this.#answeredAt = performance.now()
    this.status = 'in-progress'
    this.phone =
      this.params.twiml !== undefined
        ? await this.#followMarkup(this.params.twiml, outcome)
        : await placeCall({
            voiceHookUrl: this.#ctx.rewriteUrl(this.params.url),
            publicUrl: this.params.url,
            authToken: this.#ctx.authToken,
            signatureHeader: this.#ctx.signatureHeader,
            accountSid: this.#ctx.accountSid,
            callSid: this.sid,
            from: this.params.from,
            to: this.params.to,
            direction: 'outbound-api',
            rewriteUrl: this.#ctx.rewriteUrl,
            ...(outcome.audio ? { audio: outcome.audio } : {}),
            ...(outcome.realtime !== undefined ? { realtime: outcome.realtime } : {}),
            ...(outcome.silenceWhenIdle !== undefined ? { silenceWhenIdle: outcome.silenceWhenIdle } : {}),
            ...(outcome.playbackSpeed !== undefined ? { playbackSpeed: outcome.playbackSpeed } : {}),
            ...(outcome.fromCountry ? { fromCountry: outcome.fromCountry } : {}),
            ...(outcome.toCountry ? { toCountry: outcome.toCountry } : {}),
          }).catch((err: Error) => ({ outcome: 'http_error' as const, status: 0, body: err.message }))
    await this.progress('in-progress')
    if (this.phone.outcome === 'connected' && outcome.answeredBy !== undefined) {
      void this.#postMachineDetection(outcome.answeredBy, outcome.amdAfterMs ?? 0)
    }
    if (this.phone.outcome === 'connected') {
      if (this.#hangupRequested) await this.phone.call.hangup()
      await this.phone.call.ended
    }
    // A transferred call goes on at its new destination: its test (or a hangup) finishes it.
    if (this.updates.length === 0) await this.finish('completed')
  }

  /** An answered call created with `Twiml`: the carrier follows the document (a `<Connect><Stream>` opens the stream). */
  async #followMarkup(markup: string, outcome: Extract<CallOutcome, { kind: 'answer' }>): Promise<PlaceCallResult> {
    const verbs = readMarkup(markup)
    const connect = verbs.find((v) => v.verb === 'Connect')
    if (connect?.verb !== 'Connect') return { outcome: 'refused', markup, verbs, said: '' }
    const realtime = outcome.realtime ?? true
    try {
      const call = await SimulatedCall.connect({
        url: this.#ctx.rewriteUrl(connect.stream.url),
        callSid: this.sid,
        accountSid: this.#ctx.accountSid,
        customParameters: connect.stream.parameters,
        realtime,
        silenceWhenIdle: outcome.silenceWhenIdle ?? realtime,
        playbackSpeed: outcome.playbackSpeed ?? (realtime ? 1 : Infinity),
      })
      if (outcome.audio) void call.sendAudio(outcome.audio)
      return { outcome: 'connected', markup, verbs, call }
    } catch (err) {
      return { outcome: 'stream_error', markup, verbs, error: (err as Error).message }
    }
  }

  /**
   * The call was given new markup (Calls API update): as the carrier does, the call leaves its media stream
   * (the phone side sends `stop` and closes) and follows the new document; it stays in progress.
   */
  async update(markup: string): Promise<void> {
    this.updates.push(markup)
    if (this.phone?.outcome === 'connected') await this.phone.call.hangup()
  }

  /** REST hangup: end the stream (the phone sends `stop`) or cancel a call not yet answered. */
  async hangup(): Promise<void> {
    if (isFinal(this.status)) return
    this.#hangupRequested = true
    if (this.updates.length > 0) {
      await this.finish('completed')
      return
    }
    if (this.#answeredAt === undefined) {
      this.#abort.abort()
      await this.finish('canceled')
      return
    }
    if (this.phone?.outcome === 'connected') await this.phone.call.hangup()
    // drive() posts `completed` once the stream has ended.
    await this.done
  }

  /** Post one progress callback (if subscribed) and record the status. */
  async progress(callStatus: string): Promise<void> {
    this.status = callStatus
    const event = callStatus === 'in-progress' ? 'answered' : callStatus
    if (!this.params.statusCallbackEvents.includes(event)) return
    await this.postStatus(callStatus, {})
  }

  /** Reach a final status; the final callback is always posted. Idempotent. */
  async finish(callStatus: string): Promise<void> {
    if (isFinal(this.status)) return
    this.status = callStatus
    const seconds = this.#answeredAt === undefined ? 0 : Math.round((performance.now() - this.#answeredAt) / 1000)
    const extra: Record<string, string> = { CallDuration: String(seconds), Duration: String(Math.ceil(seconds / 60)) }
    const sip = SIP_CODES[callStatus]
    if (sip) extra.SipResponseCode = sip
    await this.postStatus(callStatus, extra)
    this.#resolveDone(callStatus)
  }

  /** The carrier's asynchronous answering machine detection reports, `afterMs` after the answer. */
  async #postMachineDetection(answeredBy: string, afterMs: number): Promise<void> {
    const target = this.params.asyncAmdCallback
    if (target === undefined || this.params.machineDetection === undefined) return
    // Counted from the moment the callee's audio starts flowing (the stream connected), as a detector hears it.
    await delay(Math.max(0, afterMs))
    if (isFinal(this.status)) return
    const form: Record<string, string> = {
      AccountSid: this.#ctx.accountSid,
      CallSid: this.sid,
      AnsweredBy: answeredBy,
      MachineDetectionDuration: String(Math.round(afterMs)),
    }
    let reply: number | string
    try {
      const r = await postSignedForm({
        postTo: this.#ctx.rewriteUrl(target),
        signedUrl: target,
        form,
        authToken: this.#ctx.authToken,
        signatureHeader: this.#ctx.signatureHeader,
      })
      reply = r.status
    } catch (err) {
      reply = (err as Error).message
    }
    this.amdCallbacks.push({ callStatus: answeredBy, form, reply, at: performance.now() })
  }

  /** Post one signed status callback to StatusCallback and record the reply. */
  async postStatus(callStatus: string, extra: Record<string, string>): Promise<void> {
    const target = this.params.statusCallback
    if (target === undefined) return
    const form: Record<string, string> = {
      AccountSid: this.#ctx.accountSid,
      ApiVersion: '2010-04-01',
      CallSid: this.sid,
      CallStatus: callStatus,
      CallbackSource: 'call-progress-events',
      Called: this.params.to,
      Caller: this.params.from,
      Direction: 'outbound-api',
      From: this.params.from,
      To: this.params.to,
      SequenceNumber: String(this.#seq++),
      Timestamp: new Date().toUTCString().replace('GMT', '+0000'),
      ...extra,
    }
    let reply: number | string
    try {
      reply = (
        await postSignedForm({
          postTo: this.#ctx.rewriteUrl(target),
          signedUrl: target,
          form,
          authToken: this.#ctx.authToken,
          signatureHeader: this.#ctx.signatureHeader,
        })
      ).status
    } catch (err) {
      reply = (err as Error).message
    }
    this.callbacks.push({ callStatus, form, reply, at: performance.now() })
  }

  /** Twilio-shaped call resource. */
  toJson(): Record<string, unknown> {
    const now = new Date().toUTCString().replace('GMT', '+0000')
    return {
      sid: this.sid,
      account_sid: this.#ctx.accountSid,
      api_version: '2010-04-01',
      to: this.params.to,
      to_formatted: this.params.to,
      from: this.params.from,
      from_formatted: this.params.from,
      status: this.status,
      direction: 'outbound-api',
      date_created: now,
      date_updated: now,
      start_time: null,
      end_time: null,
      duration: null,
      price: null,
      answered_by: null,
      parent_call_sid: null,
      uri: `/2010-04-01/Accounts/${this.#ctx.accountSid}/Calls/${this.sid}.json`,
    }
  }
}

/** True for statuses that end a call. */
export function isFinal(status: string): boolean {
  return ['completed', 'busy', 'no-answer', 'canceled', 'failed'].includes(status)
}
