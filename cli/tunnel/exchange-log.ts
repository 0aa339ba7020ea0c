import type { GatewayMessage } from '../../gateway/tunnels/tunnel-codec.js'
import type { Exchange } from './local-forwarder.js'

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

/**
 * `--tail` lines for one webhook exchange: the event (and what the user said), then the local server's answer
 * (status, time, and what the agent said).
 */
export function exchangeLines(e: Exchange): string[] {
  let event: Record<string, unknown> = {}
  try {
    event = JSON.parse(e.requestBody.toString('utf8')) as Record<string, unknown>
  } catch {
    event = {}
  }
  const type = typeof event.type === 'string' ? event.type : `${e.method} ${e.path}`
  const session = typeof event.session_id === 'string' ? ` session ${event.session_id}` : ''
  const turn = typeof event.turn_id === 'string' ? ` turn ${event.turn_id}` : ''
  const lines = [`${clock()} -> ${type}${session}${turn}${typeof event.text === 'string' ? ` user: ${quote(event.text)}` : ''}`]
  if (e.error !== undefined) {
    lines.push(`${clock()} <- failed after ${e.ms.toFixed(0)} ms: ${e.error}`)
    return lines
  }
  const said = (e.contentType ?? '').includes('text/event-stream')
    ? sseEvents(e.responseHead.toString('utf8'))
        .filter((x) => (x.type === 'response.tts' || x.type === 'response.hangup') && typeof x.content === 'string')
        .map((x) => String(x.content))
        .join(' ')
    : ''
  lines.push(`${clock()} <- ${e.status} in ${e.ms.toFixed(0)} ms${said === '' ? '' : ` agent: ${quote(said)}`}`)
  return lines
}

/** A `--tail` line for a turn that failed: its cause, how long the caller waited, and what they heard instead. */
export function turnFailedLine(m: Extract<GatewayMessage, { type: 'tail' }>): string {
  const d = m.detail ?? {}
  const waited = typeof d.waited_ms === 'number' ? `, caller waited ${(d.waited_ms / 1000).toFixed(1)} s` : ''
  const heard = typeof d.heard === 'string' ? `, heard ${quote(d.heard, 80)}` : ''
  const turn = typeof d.turn_id === 'string' ? ` turn ${d.turn_id}` : ''
  return `${clock(new Date(m.at))} turn.failed ${m.session_id}${turn} (${String(d.cause ?? 'unknown')}${waited}${heard})`
}

/** A `--tail` line for a session that started or ended. */
export function tailLine(m: Extract<GatewayMessage, { type: 'tail' }>): string {
  const d = m.detail ?? {}
  const extra =
    m.event === 'session.started'
      ? [d.channel, d.from === undefined ? undefined : `from ${String(d.from)}`]
      : [d.end_reason, typeof d.duration_ms === 'number' ? `${(d.duration_ms / 1000).toFixed(1)} s` : undefined]
  const text = extra.filter((x) => x !== undefined && x !== null).join(', ')
  return `${clock(new Date(m.at))} ${m.event} ${m.session_id}${text === '' ? '' : ` (${text})`}`
}
