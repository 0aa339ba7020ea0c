import type { GatewayMessage } from '../../gateway/tunnels/tunnel-codec.js'
import type { Cancel, Exchange } from './local-forwarder.js'
import { redactLogValue } from '../../server/log-redaction.js'

function clock(at: Date = new Date()): string {
  return at.toISOString().slice(11, 23)
}

function quote(s: string, max = 160): string {
  const t = s.replace(/\s+/g, ' ').trim()
  return JSON.stringify(t.length > max ? `${t.slice(0, max)}...` : t)
}

/** The events of an SSE body (`data:` lines joined per event), parsed as JSON where they are. */
function sseEvents(text: string): Record<string, unknown>[] {
  const out: Record<string, unknown>[] = []
  for (const block of text.split(/\r?\n\r?\n|\r\r/)) {
    const data = block
      .split(/\r?\n|\r/)
      .filter((l) => l.startsWith('data:'))
      .map((l) => l.slice(5).replace(/^ /, ''))
      .join('\n')
    if (data === '') continue
    try {
      out.push(JSON.parse(data) as Record<string, unknown>)
    } catch {
      // Not JSON: shown as nothing.
    }
  }
  return out
}

/** What a webhook request is about, from its JSON body: event type, session, turn and what the user said. */
interface Subject {
  type: string | undefined
  session: string | undefined
  turn: string | undefined
  text: string | undefined
}

function subject(e: Exchange): Subject {
  let event: Record<string, unknown> = {}
  try {
    event = JSON.parse(e.requestBody.toString('utf8')) as Record<string, unknown>
  } catch {
    event = {}
  }
  const str = (v: unknown) => (typeof v === 'string' ? v : undefined)
  return { type: str(event.type), session: str(event.session_id), turn: str(event.turn_id), text: str(event.text) }
}

/** How an end line names its request: the turn, else the session, else method and path. */
function endLabel(e: Exchange): string {
  const s = subject(e)
  if (s.turn !== undefined) return `turn ${s.turn}`
  if (s.session !== undefined) return `${s.type ?? 'request'} session ${s.session}`
  return `${e.method} ${e.path}`
}

/** `--tail`: a webhook request arrived and is being replayed on the local server. */
export function requestStartedLine(e: Exchange): string {
  const s = subject(e)
  const parts = [`${clock()} -> ${e.method} ${e.path}`]
  if (s.type !== undefined) parts.push(s.type)
  if (s.session !== undefined) parts.push(`session ${s.session}`)
  if (s.turn !== undefined) parts.push(`turn ${s.turn}`)
  // The backend gets the text as said; the terminal shows it as a log line would (the privacy redaction: cards, SSNs).
  if (s.text !== undefined) parts.push(`user: ${quote(String(redactLogValue(s.text)))}`)
  return parts.join(' ')
}

/** `--tail`: the local server answered; status, time, size and what the agent said. */
export function requestAnsweredLine(e: Exchange): string {
  const sse = (e.contentType ?? '').includes('text/event-stream')
  const events = sse ? sseEvents(e.responseHead.toString('utf8')) : []
  const said = events
    .filter((x) => (x.type === 'response.tts' || x.type === 'response.hangup') && typeof x.content === 'string')
    .map((x) => String(x.content))
    .join(' ')
  const size = [`${e.bytes} bytes`, ...(sse ? [`${events.length} events`] : [])].join(', ')
  const agent = said === '' ? '' : ` agent: ${quote(String(redactLogValue(said)))}`
  return `${clock()} <- ${endLabel(e)} ${e.status} in ${e.ms.toFixed(0)} ms (${size})${agent}`
}

/** `--tail`: the local server did not answer, or its response broke off. */
export function requestFailedLine(e: Exchange): string {
  return `${clock()} <- ${endLabel(e)} failed after ${e.ms.toFixed(0)} ms: ${e.error ?? 'unknown error'}`
}

/** Why the gateway stopped waiting, in words. */
export function cancelText(c: Cancel): string {
  switch (c.reason) {
    case 'timeout':
      return `the backend took too long${c.detail === undefined ? '' : `: ${c.detail}`}`
    case 'caller_gone':
      return 'the caller stopped waiting (the user interrupted or the call ended)'
    case 'shutdown':
      return 'the gateway is shutting down'
    case 'connection_lost':
      return 'the tunnel connection to the gateway was lost'
    default:
      return 'the gateway stopped waiting (it did not say why)'
  }
}

/** `--tail`: the gateway cancelled the request (a timeout is named as one), or the tunnel's connection was lost. */
export function requestCancelledLine(e: Exchange): string {
  const c = e.cancel ?? { reason: undefined }
  const what = c.reason === 'timeout' ? 'timed out' : 'cancelled'
  return `${clock()} <- ${endLabel(e)} ${what} after ${e.ms.toFixed(0)} ms: ${cancelText(c)}`
}

/** The line for an exchange that ended, whichever way it ended. */
export function requestEndedLine(e: Exchange): string {
  if (e.cancel !== undefined) return requestCancelledLine(e)
  if (e.error !== undefined) return requestFailedLine(e)
  return requestAnsweredLine(e)
}

type TailMessage = Extract<GatewayMessage, { type: 'tail' }>

function tailText(m: TailMessage, extra: unknown[]): string {
  const text = extra.filter((x) => x !== undefined && x !== null).join(', ')
  return `${clock(new Date(m.at))} ${m.event} ${m.session_id}${text === '' ? '' : ` (${text})`}`
}

/** `--tail`: a session of the agent started (channel, caller). */
export function sessionStartedLine(m: TailMessage): string {
  const d = m.detail ?? {}
  return tailText(m, [d.channel, d.from === undefined ? undefined : `from ${String(d.from)}`])
}

/** `--tail`: a session of the agent ended (why, how long). */
export function sessionEndedLine(m: TailMessage): string {
  const d = m.detail ?? {}
  return tailText(m, [d.end_reason, typeof d.duration_ms === 'number' ? `${(d.duration_ms / 1000).toFixed(1)} s` : undefined])
}

/** `--tail`: a turn that failed: its cause, how long the caller waited, and what they heard instead. */
export function turnFailedLine(m: TailMessage): string {
  const d = m.detail ?? {}
  const waited = typeof d.waited_ms === 'number' ? `, caller waited ${(d.waited_ms / 1000).toFixed(1)} s` : ''
  const heard = typeof d.heard === 'string' ? `, heard ${quote(d.heard, 80)}` : ''
  const turn = typeof d.turn_id === 'string' ? ` turn ${d.turn_id}` : ''
  return `${clock(new Date(m.at))} turn.failed ${m.session_id}${turn} (${String(d.cause ?? 'unknown')}${waited}${heard})`
}

/** A `--tail` line for a session event the gateway sent (one function per kind above). */
export function tailLine(m: TailMessage): string {
  switch (m.event) {
    case 'session.started':
      return sessionStartedLine(m)
    case 'session.ended':
      return sessionEndedLine(m)
    case 'turn.failed':
      return turnFailedLine(m)
    default:
      return tailText(m, [])
  }
}
