// The realtime half of the speech fake: OpenAI's Realtime transcription session and vLLM's /v1/realtime, in the
// event names and order described at the top of fake-openai-speech.ts.
import type { IncomingHttpHeaders } from 'node:http'
import type { WebSocket } from 'ws'

let eventSeq = 0
const eventId = () => `event_${++eventSeq}`

/** One realtime connection. */
export interface RealtimeRecord {
  flavor: 'openai' | 'vllm'
  headers: IncomingHttpHeaders
  /** Client events in arrival order (append events keep their audio). */
  events: Array<Record<string, unknown>>
  /** The fake's own events, in the order it sent them. */
  sent: Array<Record<string, unknown>>
  /** Audio bytes appended per committed turn. */
  turns: Buffer[]
  socket: WebSocket
}

/** Serves one realtime connection in `flavor`'s protocol; `text` decides each committed turn's transcript. */
export function serveRealtime(
  ws: WebSocket,
  flavor: 'openai' | 'vllm',
  headers: IncomingHttpHeaders,
  text: (audio: Buffer, record: RealtimeRecord) => string | { close: number },
): RealtimeRecord {
  const record: RealtimeRecord = { flavor, headers, events: [], sent: [], turns: [], socket: ws }
  const out = (event: Record<string, unknown>) => {
    record.sent.push(event)
    ws.send(JSON.stringify(event))
  }
  let buffer: Buffer[] = []
  let itemSeq = 0
  let previous: string | null = null
  if (flavor === 'openai') out({ type: 'session.created', event_id: eventId(), session: { type: 'transcription', id: 'sess_fake' } })
  else out({ type: 'session.created', id: 'sess-fake', created: Math.floor(Date.now() / 1000) })
  ws.on('message', (data: Buffer) => {
    let event: Record<string, unknown>
    try {
      event = JSON.parse(data.toString('utf8')) as Record<string, unknown>
    } catch {
      return out(
        flavor === 'openai'
          ? {
              type: 'error',
              event_id: eventId(),
              error: { type: 'invalid_request_error', code: 'invalid_json', message: 'Invalid JSON' },
            }
          : { type: 'error', error: 'Invalid JSON', code: 'invalid_json' },
      )
    }
    record.events.push(event)
    switch (event.type) {
      case 'session.update':
        if (flavor === 'openai') out({ type: 'session.updated', event_id: eventId(), session: event.session })
        return
      case 'input_audio_buffer.append':
        buffer.push(Buffer.from(String(event.audio), 'base64'))
        return
      case 'input_audio_buffer.commit': {
        if (flavor === 'vllm' && event.final !== true) return
        const audio = Buffer.concat(buffer)
        buffer = []
        record.turns.push(audio)
        const answer = text(audio, record)
        if (typeof answer !== 'string') return ws.close(answer.close)
        const words = answer.split(/(?<= )/).filter(Boolean)
        if (flavor === 'vllm') {
          for (const delta of words) out({ type: 'transcription.delta', delta })
          out({
            type: 'transcription.done',
            text: answer,
            usage: { prompt_tokens: 1, completion_tokens: words.length, total_tokens: 1 + words.length },
          })
          return
        }
        const item = `item_${++itemSeq}`
        out({ type: 'input_audio_buffer.committed', event_id: eventId(), previous_item_id: previous, item_id: item })
        out({
          type: 'conversation.item.added',
          event_id: eventId(),
          previous_item_id: previous,
          item: { id: item, type: 'message', status: 'completed', role: 'user', content: [{ type: 'input_audio', transcript: null }] },
        })
        previous = item
        for (const delta of words)
          out({ type: 'conversation.item.input_audio_transcription.delta', event_id: eventId(), item_id: item, content_index: 0, delta })
        out({
          type: 'conversation.item.input_audio_transcription.completed',
          event_id: eventId(),
          item_id: item,
          content_index: 0,
          transcript: answer,
        })
        return
      }
      default:
        out(
          flavor === 'openai'
            ? {
                type: 'error',
                event_id: eventId(),
                error: { type: 'invalid_request_error', code: 'unknown_event', message: `unknown event ${String(event.type)}` },
              }
            : { type: 'error', error: `Unknown event type: ${String(event.type)}`, code: 'unknown_event' },
        )
    }
  })
  return record
}
