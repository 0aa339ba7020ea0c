/**
 * The media stream of a warm transfer's human leg: the carrier connects it with a `tl_` token (not a
 * session key), so no agent session is opened. Frames go to the leg's handler (audio, keys, mark echoes, the end);
 * the handler plays audio to the human through `LegMediaOut`. Mu-law 8 kHz both ways, as on every carrier stream.
 */
import type { WebSocket } from 'ws'
import type { CarrierMediaCodec } from '../../carrier/carrier.js'
import type { Log } from '../../core/log.js'
import type { LegMediaIn, LegMediaOut, TransferLegHandler } from '../../gateway/transfer/transfer-legs.js'
import { LogLimiter } from './log-limiter.js'
import { MAX_BUFFERED_BYTES, MAX_MEDIA_PAYLOAD_BYTES, START_TIMEOUT_MS } from './media-stream-transport.js'

/** Binds one upgraded socket to its leg. */
export function attachTransferLeg(ws: WebSocket, handler: TransferLegHandler, codec: CarrierMediaCodec, log: Log): void {
  const warn = new LogLimiter(log)
  let streamSid: string | undefined
  let input: LegMediaIn | undefined
  let ended = false
  const end = () => {
    if (ended) return
    ended = true
    input?.ended()
  }
  const open = () => ws.readyState === ws.OPEN && streamSid !== undefined
  const out: LegMediaOut = {
    send(audio) {
      if (!open() || streamSid === undefined) return
      if (ws.bufferedAmount > MAX_BUFFERED_BYTES) return warn.warn({}, 'transfer leg socket backed up: audio dropped')
      for (let at = 0; at < audio.length; at += MAX_MEDIA_PAYLOAD_BYTES) {
        ws.send(codec.encodeMedia(streamSid, audio.subarray(at, at + MAX_MEDIA_PAYLOAD_BYTES)))
      }
    },
    mark(name) {
      if (open() && streamSid !== undefined) ws.send(codec.encodeMark(streamSid, name))
    },
    clear() {
      if (open() && streamSid !== undefined) ws.send(codec.encodeClear(streamSid))
    },
    close() {
      if (ws.readyState === ws.OPEN || ws.readyState === ws.CONNECTING) ws.close(1000, 'transfer leg over')
    },
  }
  const startTimer = setTimeout(() => {
    if (streamSid === undefined) ws.close(1000, 'no start')
  }, START_TIMEOUT_MS).unref()
  ws.on('close', () => {
    clearTimeout(startTimer)
    end()
  })
  ws.on('message', (data, isBinary) => {
    if (isBinary || ended) return
    const event = codec.decode(data as Buffer)
    if (event === null || event.kind === 'connected') return
    if (event.kind === 'invalid') return warn.warn({ reason: event.reason }, 'malformed transfer leg frame ignored')
    if (event.kind === 'start') {
      if (streamSid !== undefined) return
      clearTimeout(startTimer)
      streamSid = event.streamSid
      input = handler.connect(out)
      if (input === undefined) out.close()
      return
    }
    if (input === undefined || event.streamSid !== streamSid) return
    switch (event.kind) {
      case 'media':
        return input.media(event.payload)
      case 'dtmf':
        return input.dtmf(event.digit)
      case 'mark':
        return input.mark(event.name)
      case 'stop':
        end()
        out.close()
        return
    }
  })
}
