/**
 * The endpoint's calls, found two ways. An INVITE not answered yet is found by its transaction key, which is
 * what a CANCEL carries (RFC 3261 section 9.2: same branch and sent-by). A dialog (from our 200 on) is found by
 * Call-ID and our tag, which every in-dialog request (ACK, BYE, re-INVITE) carries in its To header (section
 * 12.2.2; we generate the tag, so with the Call-ID it is unique). The table is bounded: past `max` calls a new
 * INVITE is refused (503) before anything is allocated for it. Pure: no sockets, no timers.
 */
import { getHeader, type SipMessage } from '../message/sip-message.js'
import { parseNameAddr } from '../message/sip-uri-codec.js'

/** Most calls (ringing and connected) one endpoint holds. */
export const MAX_SIP_CALLS = 2_000

/** Calls by INVITE transaction and by dialog. */
export class SipDialogTable<Call> {
  readonly #max: number
  readonly #early = new Map<string, Call>()
  readonly #dialogs = new Map<string, Call>()
  /** Every call held, early or in a dialog, counted once. */
  readonly #all = new Set<Call>()

  constructor(max = MAX_SIP_CALLS) {
    this.#max = max
  }

  /** Calls held. */
  get size(): number {
    return this.#all.size
  }

  /** True when a new call may be taken. */
  get hasRoom(): boolean {
    return this.#all.size < this.#max
  }

  /** Holds a call whose INVITE is not answered yet; false when the table is full. */
  addEarly(inviteKey: string, call: Call): boolean {
    if (!this.hasRoom && !this.#all.has(call)) return false
    this.#early.set(inviteKey, call)
    this.#all.add(call)
    return true
  }

  /** The call a CANCEL (or a retransmitted INVITE) names. */
  findEarly(inviteKey: string): Call | undefined {
    return this.#early.get(inviteKey)
  }

  /** The INVITE was answered 200: the call is now found by its dialog. */
  confirm(inviteKey: string, callId: string, localTag: string, call: Call): void {
    if (this.#early.get(inviteKey) === call) this.#early.delete(inviteKey)
    this.#dialogs.set(dialogKey(callId, localTag), call)
    this.#all.add(call)
  }

  /** The call an in-dialog request belongs to (Call-ID and the To tag, ours), if any. */
  findDialog(message: Pick<SipMessage, 'headers'>): Call | undefined {
    const callId = getHeader(message, 'Call-ID')
    const tag = toTag(message)
    if (callId === undefined || tag === undefined) return undefined
    return this.#dialogs.get(dialogKey(callId, tag))
  }

  /** Forgets a call wherever it is held. */
  remove(call: Call): void {
    if (!this.#all.delete(call)) return
    for (const [k, c] of this.#early) if (c === call) this.#early.delete(k)
    for (const [k, c] of this.#dialogs) if (c === call) this.#dialogs.delete(k)
  }

  /** Every call held (for shutdown). */
  calls(): Call[] {
    return [...this.#all]
  }
}

/** The To header's tag, if it has one. */
export function toTag(message: Pick<SipMessage, 'headers'>): string | undefined {
  const to = getHeader(message, 'To')
  const tag = to === undefined ? undefined : parseNameAddr(to)?.params.get('tag')
  return tag === null || tag === undefined || tag === '' ? undefined : tag
}

function dialogKey(callId: string, localTag: string): string {
  return `${callId}\n${localTag}`
}
