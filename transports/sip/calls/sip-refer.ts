/**
 * Blind transfer by REFER (RFC 3515) as the transferor: the Refer-To a transfer target becomes, and the implicit
 * subscription the REFER creates, followed to its end. The peer answers the REFER (2xx: it will try; 3xx-6xx or no
 * answer: refused), then reports the new call's progress in NOTIFYs (`Event: refer`, a `message/sipfrag` body
 * holding the status line of the transferee's INVITE: `SIP/2.0 100 Trying`, `180 Ringing`, `200 OK`). A 2xx
 * sipfrag is success; a 3xx-6xx one, a subscription terminated without a final status, or no final NOTIFY within
 * the bound is failure. No I/O here: the call sends the REFER and hands its answer and the NOTIFYs in.
 */
import type { TransferTarget } from '../../../core/transfer-target.js'
import { getHeader, type SipRequest } from '../message/sip-message.js'
import type { TimerHandle, TimerScheduler } from '../timer-scheduler.js'

/** How long a transfer waits for the final NOTIFY after the REFER was accepted. */
export const REFER_NOTIFY_TIMEOUT_MS = 30_000

/** How the transfer ended: `error` is a sentence for the agent's `transfer_failed`. */
export type ReferOutcome = { readonly ok: true } | { readonly ok: false; readonly error: string }

/**
 * The Refer-To value for `target`: a SIP URI as given, with the target's `X-` headers as URI headers (the transferee
 * copies them into its INVITE, RFC 3261 section 19.1.5); an E.164 number as `sip:+NUMBER@numberHost`, so the peer
 * routes it as it routes its own calls.
 */
export function referTo(target: TransferTarget, numberHost: string): string {
  if (target.kind === 'number') return `<sip:${target.to}@${numberHost}>`
  const headers = target.headers.map((h) => `${h.name}=${encodeURIComponent(h.value)}`).join('&')
  return `<${target.to}${headers === '' ? '' : `?${headers}`}>`
}

/** The status code of a `message/sipfrag` body's status line (`SIP/2.0 200 OK`), or null for anything else. */
export function sipfragStatus(body: string): number | null {
  const m = /^SIP\/2\.0 ([1-6]\d\d)(?: |\r|\n|$)/.exec(body.trimStart())
  return m === null ? null : Number(m[1])
}

/** The subscription of one REFER. */
export class ReferSubscription {
  readonly #timers: TimerScheduler
  readonly #timeoutMs: number
  readonly #settle: (outcome: ReferOutcome) => void
  #timer: TimerHandle | undefined
  #done = false
  /** The last progress a NOTIFY reported (for the failure's sentence). */
  #last: number | undefined

  /** `settle` is told once. The bound runs from the REFER's sending (its answer may never come). */
  constructor(timers: TimerScheduler, timeoutMs: number, settle: (outcome: ReferOutcome) => void) {
    this.#timers = timers
    this.#timeoutMs = timeoutMs
    this.#settle = settle
    this.#timer = timers.schedule(timeoutMs, () => this.#finish({ ok: false, error: this.#timeoutSentence() }))
  }

  /** True until the outcome is known. */
  get pending(): boolean {
    return !this.#done
  }

  /** The REFER's final answer: 2xx waits for the NOTIFYs (the bound starts again); anything else is a refusal. */
  answered(status: number | 'timeout'): void {
    if (this.#done) return
    if (status === 'timeout') return this.#finish({ ok: false, error: 'the SIP peer did not answer the REFER' })
    if (status >= 300) return this.#finish({ ok: false, error: `the SIP peer refused the REFER (${status})` })
    this.#timer?.cancel()
    this.#timer = this.#timers.schedule(this.#timeoutMs, () => this.#finish({ ok: false, error: this.#timeoutSentence() }))
  }

  /**
   * A NOTIFY in the dialog: the status to answer it with. 489 for another event package, 400 for a body that is
   * not a sipfrag status line, 481 once the subscription is over; else 200, and a final status settles the transfer.
   */
  notify(request: SipRequest): 200 | 400 | 481 | 489 {
    const event = (getHeader(request, 'Event') ?? '').split(';')[0]!.trim().toLowerCase()
    if (event !== 'refer') return 489
    if (this.#done) return 481
    const type = (getHeader(request, 'Content-Type') ?? '').split(';')[0]!.trim().toLowerCase()
    const status = type === 'message/sipfrag' ? sipfragStatus(request.body.toString('utf8')) : null
    const terminated = /^\s*terminated\b/i.test(getHeader(request, 'Subscription-State') ?? '')
    if (status === null) {
      if (terminated) this.#finish({ ok: false, error: 'the SIP peer ended the transfer without its outcome' })
      return terminated ? 200 : 400
    }
    this.#last = status
    if (status >= 300) this.#finish({ ok: false, error: `the transfer target answered ${status}` })
    else if (status >= 200) this.#finish({ ok: true })
    else if (terminated) this.#finish({ ok: false, error: 'the SIP peer ended the transfer before its outcome' })
    return 200
  }

  /** The call ended or the session gave up: the transfer fails with `error` (the owner may ignore it). */
  abort(error: string): void {
    this.#finish({ ok: false, error })
  }

  #timeoutSentence(): string {
    const progress = this.#last === undefined ? 'no progress reported' : `last progress ${this.#last}`
    return `the transfer did not complete within ${Math.round(this.#timeoutMs / 1000)} s (${progress})`
  }

  #finish(outcome: ReferOutcome): void {
    if (this.#done) return
    this.#done = true
    this.#timer?.cancel()
    this.#timer = undefined
    this.#settle(outcome)
  }
}
