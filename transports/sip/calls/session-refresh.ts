/**
 * Our session refresh (RFC 4028 section 10) when we are the refresher: an UPDATE without a body when the peer's
 * Allow lists UPDATE (the section's recommendation: no new offer), else a re-INVITE with our SDP again (same
 * session id, version + 1). The re-INVITE's 2xx is acknowledged by us, retransmissions included; its error
 * answers are acknowledged by the transaction. The outcome goes to the call: a 2xx (with the answer, for its
 * Session-Expires), a failure status, or `timeout` (timer B or F).
 */
import type { ClientTransactionTable, ClientWire } from '../transactions/client-transaction-table.js'
import type { SipHeader, SipRequest, SipResponse } from '../message/sip-message.js'

/** How long after an answer that neither refreshes nor ends the session (491 glare, 500) we try again. */
export const REFRESH_RETRY_MS = 4_000

/** What a refresh needs of its dialog. */
export interface SessionRefreshDialog {
  readonly clients: ClientTransactionTable
  readonly wire: ClientWire
  /** A request in the dialog with the next CSeq of ours (or `cseq` for an ACK), its branch. */
  readonly request: (
    method: 'INVITE' | 'UPDATE' | 'ACK',
    headers: readonly SipHeader[],
    body?: Buffer,
    cseq?: number,
  ) => { request: SipRequest; branch: string; cseq: number }
}

/** How a refresh ended. */
export type RefreshOutcome =
  | { readonly kind: 'refreshed'; readonly answer: SipResponse | undefined }
  /** 408, 481 or no answer: the dialog is gone (section 10), the call ends with a BYE. */
  | { readonly kind: 'gone' }
  /** Any other failure: the session stands, the refresh is tried again. */
  | { readonly kind: 'failed'; readonly status: number }

/** The outcome for a final status (or `timeout`). */
export function refreshOutcome(status: number | 'timeout', answer?: SipResponse): RefreshOutcome {
  if (status === 'timeout' || status === 408 || status === 481) return { kind: 'gone' }
  if (status >= 200 && status < 300) return { kind: 'refreshed', answer }
  return { kind: 'failed', status }
}

/** `sdp` with its `o=` version one higher (same session id), and that version; unchanged when it has no `o=` line. */
export function nextSdpVersion(sdp: string): { sdp: string; version: number | undefined } {
  let version: number | undefined
  const next = sdp.replace(/^o=(\S+) (\S+) (\d+) /m, (_all, user: string, id: string, v: string) => {
    version = Number(v) + 1
    return `o=${user} ${id} ${version} `
  })
  return { sdp: next, version }
}

/**
 * Sends one refresh asking for `intervalS` with us as the refresher; `sdp` (a re-INVITE) or none (an UPDATE).
 * `done` is told once.
 */
export function sendRefresh(
  dialog: SessionRefreshDialog,
  intervalS: number,
  sdp: { readonly body: string; readonly contact: string } | undefined,
  done: (outcome: RefreshOutcome) => void,
): void {
  const timer: SipHeader[] = [
    { name: 'Session-Expires', value: `${intervalS};refresher=uac` },
    { name: 'Supported', value: 'timer' },
  ]
  if (sdp === undefined) {
    const { request, branch } = dialog.request('UPDATE', timer)
    dialog.clients.send(request, branch, dialog.wire, (status) => done(refreshOutcome(status)))
    return
  }
  const headers = [...timer, { name: 'Contact', value: `<${sdp.contact}>` }, { name: 'Content-Type', value: 'application/sdp' }]
  const { request, branch, cseq } = dialog.request('INVITE', headers, Buffer.from(sdp.body))
  let told = false
  let ack: SipRequest | undefined
  const tell = (outcome: RefreshOutcome) => {
    if (told) return
    told = true
    done(outcome)
  }
  const tx = dialog.clients.sendInvite(request, branch, dialog.wire, {
    onResponse: (response) => {
      if (response.status < 200) return
      if (response.status < 300) {
        // Section 13.2.2.4: the 2xx and each retransmission of it get our ACK (a request of its own).
        ack ??= dialog.request('ACK', [], undefined, cseq).request
        dialog.wire.send(ack)
      }
      tell(refreshOutcome(response.status, response))
    },
    onTimeout: () => tell({ kind: 'gone' }),
  })
  // A full transaction table sent nothing: the session stands, the refresh is tried again.
  if (tx === null) tell({ kind: 'failed', status: 503 })
}
