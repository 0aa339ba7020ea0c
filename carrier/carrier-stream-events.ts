/**
 * What a carrier sends on the media stream, as typed events: the codec (`CarrierMediaCodec` in carrier.ts) decodes
 * each wire frame into one of these, or into a decode error it returns rather than throws.
 */
/** Audio format announced by the carrier in `start`. */
export interface CarrierMediaFormat {
  readonly encoding: string
  readonly sampleRate: number
  readonly channels: number
}

/** The carrier opened the stream. */
export interface CarrierConnectedEvent {
  readonly kind: 'connected'
  readonly protocol: string
  readonly version: string
}

/** Stream metadata; sent once before any media. */
export interface CarrierStartEvent {
  readonly kind: 'start'
  readonly sequenceNumber: number
  readonly streamSid: string
  readonly callSid: string
  readonly accountSid: string
  readonly tracks: readonly string[]
  readonly customParameters: Readonly<Record<string, string>>
  readonly mediaFormat: CarrierMediaFormat
}

/** One chunk of caller audio. */
export interface CarrierMediaEvent {
  readonly kind: 'media'
  readonly sequenceNumber: number
  readonly streamSid: string
  /** Raw mu-law 8 kHz bytes. */
  readonly payload: Buffer
  /** Milliseconds since the stream started. */
  readonly timestamp: number
  readonly chunk: number
  readonly track: string
}

/** Echo of a mark we sent: audio queued before it has played (or was cleared). */
export interface CarrierMarkEvent {
  readonly kind: 'mark'
  readonly sequenceNumber: number
  readonly streamSid: string
  readonly name: string
}

/** The caller pressed a key. */
export interface CarrierDtmfEvent {
  readonly kind: 'dtmf'
  readonly sequenceNumber: number
  readonly streamSid: string
  readonly digit: string
  readonly track: string
}

/** The stream ended (hangup or the call left the stream). */
export interface CarrierStopEvent {
  readonly kind: 'stop'
  readonly sequenceNumber: number
  readonly streamSid: string
  readonly callSid: string | undefined
  readonly accountSid: string | undefined
}

/** Stable reasons a frame failed to decode. */
export type CarrierDecodeErrorReason = 'too_large' | 'not_json' | 'not_object' | 'unknown_event' | 'missing_field' | 'bad_field'

/** A malformed or unknown frame; returned, never thrown. */
export interface CarrierDecodeError {
  readonly kind: 'invalid'
  readonly reason: CarrierDecodeErrorReason
  /** Human-readable detail for logs (never contains the payload). */
  readonly detail: string
}

/** Everything a carrier can send on the media stream, plus the decode error. */
export type CarrierInbound =
  | CarrierConnectedEvent
  | CarrierStartEvent
  | CarrierMediaEvent
  | CarrierMarkEvent
  | CarrierDtmfEvent
  | CarrierStopEvent
  | CarrierDecodeError
