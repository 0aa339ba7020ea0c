/**
 * Pure codec for Twilio-compatible Media Streams frames (JSON text; numbers arrive as strings).
 * Runs ~50 times a second per call. Given the frame's bytes, a plain `media` frame is read straight from them
 * (media-frame-scanner.ts): the payload buffer and the event object are its only allocations. Every other frame,
 * and any media frame out of the ordinary, goes through JSON.parse.
 */
import type { CarrierMediaCodec } from '../carrier.js'
import type { CarrierDecodeError, CarrierDecodeErrorReason, CarrierInbound, CarrierMediaFormat } from '../carrier-stream-events.js'
import { ABSENT, MediaFrameScanner, type ScannedMedia } from './media-frame-scanner.js'

/** Largest text frame accepted (a 20 ms frame is ~350 bytes; a start frame well under 4 KiB). */
export const MAX_FRAME_BYTES = 64 * 1024

/** Track name of caller audio in `media` frames. */
export const INBOUND_TRACK = 'inbound'

type Json = Record<string, unknown>

/** `CarrierMediaCodec` for Twilio-compatible media streams. */
export class TwilioMediaCodec implements CarrierMediaCodec {
  // The stream id is the same for every frame of a call; escape it once, not 50 times a second.
  #lastSid = ''
  #lastSidJson = '""'
  readonly #scanner = new MediaFrameScanner()

  decode(raw: string | Uint8Array): CarrierInbound | null {
    if (typeof raw !== 'string') {
      if (raw.length > MAX_FRAME_BYTES) return invalid('too_large', `frame exceeds ${MAX_FRAME_BYTES} bytes`)
      const media = this.#scanner.scan(raw)
      if (media !== undefined) return mediaEvent(media)
      raw = Buffer.from(raw.buffer, raw.byteOffset, raw.length).toString('utf8')
    }
    // UTF-16 length <= byte length <= 3 x UTF-16 length: only count bytes when it could matter.
    if (raw.length > MAX_FRAME_BYTES || (raw.length * 3 > MAX_FRAME_BYTES && Buffer.byteLength(raw) > MAX_FRAME_BYTES)) {
      return invalid('too_large', `frame exceeds ${MAX_FRAME_BYTES} bytes`)
    }
    let msg: unknown
    try {
      msg = JSON.parse(raw)
    } catch {
      return invalid('not_json', 'frame is not JSON')
    }
    if (typeof msg !== 'object' || msg === null || Array.isArray(msg)) {
      return invalid('not_object', 'frame is not a JSON object')
    }
    const m = msg as Json
    switch (m.event) {
      case 'media':
        return decodeMedia(m)
      case 'mark':
        return decodeMark(m)
      case 'dtmf':
        return decodeDtmf(m)
      case 'start':
        return decodeStart(m)
      case 'stop':
        return decodeStop(m)
      case 'connected':
        return {
          kind: 'connected',
          protocol: typeof m.protocol === 'string' ? m.protocol : '',
          version: typeof m.version === 'string' ? m.version : '',
        }
      case undefined:
        return invalid('missing_field', 'event is missing')
      default:
        return invalid('unknown_event', `unknown event ${JSON.stringify(String(m.event)).slice(0, 40)}`)
    }
  }

  encodeMedia(streamSid: string, muLaw: Buffer): string {
    return `{"event":"media","streamSid":${this.#sidJson(streamSid)},"media":{"payload":"${muLaw.toString('base64')}"}}`
  }

  encodeMark(streamSid: string, name: string): string {
    return `{"event":"mark","streamSid":${this.#sidJson(streamSid)},"mark":{"name":${JSON.stringify(name)}}}`
  }

  encodeClear(streamSid: string): string {
    return `{"event":"clear","streamSid":${this.#sidJson(streamSid)}}`
  }

  #sidJson(streamSid: string): string {
    if (streamSid !== this.#lastSid) {
      this.#lastSid = streamSid
      this.#lastSidJson = JSON.stringify(streamSid)
    }
    return this.#lastSidJson
  }
}

function decodeMedia(m: Json): CarrierInbound | null {
  const streamSid = m.streamSid
  const media = m.media
  if (typeof streamSid !== 'string') return missing('streamSid')
  if (typeof media !== 'object' || media === null) return missing('media')
  const { payload, track, chunk, timestamp } = media as Json
  if (typeof payload !== 'string') return missing('media.payload')
  const seq = toUint(m.sequenceNumber)
  if (seq < 0) return bad('sequenceNumber')
  const chunkNo = toUint(chunk)
  if (chunkNo < 0) return bad('media.chunk')
  const ts = toUint(timestamp)
  if (ts < 0) return bad('media.timestamp')
  const trackName = track === undefined ? INBOUND_TRACK : track
  if (typeof trackName !== 'string') return bad('media.track')
  // With <Connect><Stream> only the caller's track is sent; anything else is not for the pipeline.
  if (trackName !== INBOUND_TRACK) return null
  const bytes = Buffer.from(payload, 'base64')
  // Buffer.from skips characters outside the alphabet, so junk shows up as a length mismatch.
  if (bytes.length === 0 || bytes.length !== base64DecodedLength(payload)) return bad('media.payload')
  return { kind: 'media', sequenceNumber: seq, streamSid, payload: bytes, timestamp: ts, chunk: chunkNo, track: trackName }
}

/** The event for a frame the scanner read, with the same checks, in the same order, as `decodeMedia`. */
function mediaEvent(m: Readonly<ScannedMedia>): CarrierInbound | null {
  if (m.streamSid === undefined) return missing('streamSid')
  if (!m.hasMedia) return missing('media')
  if (m.payload === undefined) return missing('media.payload')
  const track = m.track ?? INBOUND_TRACK
  if (track !== INBOUND_TRACK) return null
  return {
    kind: 'media',
    sequenceNumber: m.sequenceNumber === ABSENT ? 0 : m.sequenceNumber,
    streamSid: m.streamSid,
    payload: m.payload,
    timestamp: m.timestamp === ABSENT ? 0 : m.timestamp,
    chunk: m.chunk === ABSENT ? 0 : m.chunk,
    track,
  }
}

function decodeMark(m: Json): CarrierInbound {
  const streamSid = m.streamSid
  if (typeof streamSid !== 'string') return missing('streamSid')
  const mark = m.mark
  if (typeof mark !== 'object' || mark === null) return missing('mark')
  const name = (mark as Json).name
  if (typeof name !== 'string') return missing('mark.name')
  const seq = toUint(m.sequenceNumber)
  if (seq < 0) return bad('sequenceNumber')
  return { kind: 'mark', sequenceNumber: seq, streamSid, name }
}

function decodeDtmf(m: Json): CarrierInbound {
  const streamSid = m.streamSid
  if (typeof streamSid !== 'string') return missing('streamSid')
  const dtmf = m.dtmf
  if (typeof dtmf !== 'object' || dtmf === null) return missing('dtmf')
  const { digit, track } = dtmf as Json
  if (typeof digit !== 'string') return missing('dtmf.digit')
  if (!/^[0-9*#A-Da-dw]$/.test(digit)) return bad('dtmf.digit')
  const seq = toUint(m.sequenceNumber)
  if (seq < 0) return bad('sequenceNumber')
  return { kind: 'dtmf', sequenceNumber: seq, streamSid, digit, track: typeof track === 'string' ? track : 'inbound_track' }
}

function decodeStart(m: Json): CarrierInbound {
  const start = m.start
  if (typeof start !== 'object' || start === null) return missing('start')
  const s = start as Json
  const streamSid = typeof s.streamSid === 'string' ? s.streamSid : m.streamSid
  if (typeof streamSid !== 'string') return missing('start.streamSid')
  if (typeof s.callSid !== 'string') return missing('start.callSid')
  if (typeof s.accountSid !== 'string') return missing('start.accountSid')
  const seq = toUint(m.sequenceNumber)
  if (seq < 0) return bad('sequenceNumber')
  const tracks = s.tracks === undefined ? [INBOUND_TRACK] : s.tracks
  if (!Array.isArray(tracks) || !tracks.every((t) => typeof t === 'string')) return bad('start.tracks')
  const customParameters: Record<string, string> = {}
  if (s.customParameters !== undefined && s.customParameters !== null) {
    if (typeof s.customParameters !== 'object' || Array.isArray(s.customParameters)) return bad('start.customParameters')
    for (const [k, v] of Object.entries(s.customParameters as Json)) {
      if (typeof v !== 'string') return bad('start.customParameters')
      customParameters[k] = v
    }
  }
  const mediaFormat = decodeMediaFormat(s.mediaFormat)
  if (mediaFormat === undefined) return bad('start.mediaFormat')
  return {
    kind: 'start',
    sequenceNumber: seq,
    streamSid,
    callSid: s.callSid,
    accountSid: s.accountSid,
    tracks: tracks as string[],
    customParameters,
    mediaFormat,
  }
}

function decodeMediaFormat(value: unknown): CarrierMediaFormat | undefined {
  if (value === undefined) return { encoding: 'audio/x-mulaw', sampleRate: 8000, channels: 1 }
  if (typeof value !== 'object' || value === null) return undefined
  const { encoding, sampleRate, channels } = value as Json
  const rate = toUint(sampleRate)
  const ch = channels === undefined ? 1 : toUint(channels)
  if (typeof encoding !== 'string' || rate <= 0 || ch <= 0) return undefined
  return { encoding, sampleRate: rate, channels: ch }
}

function decodeStop(m: Json): CarrierInbound {
  const streamSid = m.streamSid
  if (typeof streamSid !== 'string') return missing('streamSid')
  const seq = toUint(m.sequenceNumber)
  if (seq < 0) return bad('sequenceNumber')
  const stop = typeof m.stop === 'object' && m.stop !== null ? (m.stop as Json) : {}
  return {
    kind: 'stop',
    sequenceNumber: seq,
    streamSid,
    callSid: typeof stop.callSid === 'string' ? stop.callSid : undefined,
    accountSid: typeof stop.accountSid === 'string' ? stop.accountSid : undefined,
  }
}

/** Non-negative integer from a decimal string or a number; -1 when it is neither. Absent -> 0. */
function toUint(value: unknown): number {
  if (value === undefined) return 0
  if (typeof value === 'number') return Number.isSafeInteger(value) && value >= 0 ? value : -1
  if (typeof value !== 'string' || value.length === 0 || value.length > 15) return -1
  let n = 0
  for (let i = 0; i < value.length; i++) {
    const c = value.charCodeAt(i) - 48
    if (c < 0 || c > 9) return -1
    n = n * 10 + c
  }
  return n
}

function base64DecodedLength(b64: string): number {
  const len = b64.length
  let pad = 0
  if (len > 0 && b64.charCodeAt(len - 1) === 61) pad++
  if (len > 1 && b64.charCodeAt(len - 2) === 61) pad++
  return Math.floor((len * 3) / 4) - pad
}

function invalid(reason: CarrierDecodeErrorReason, detail: string): CarrierDecodeError {
  return { kind: 'invalid', reason, detail }
}

function missing(field: string): CarrierDecodeError {
  return invalid('missing_field', `${field} is missing`)
}

function bad(field: string): CarrierDecodeError {
  return invalid('bad_field', `${field} is malformed`)
}
