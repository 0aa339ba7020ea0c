/**
 * Pure codec for RFC 4733 telephone-event payloads (section 2.3): event (8 bits), end bit, reserved bit, volume
 * (6 bits, -dBm0) and duration (16 bits, in timestamp units from the event's start), plus the DTMF digit mapping
 * of section 3.2 (events 0-15).
 */

/** One telephone-event report. */
export interface TelephoneEvent {
  readonly event: number
  /** E bit: this report ends the event. */
  readonly end: boolean
  /** Power level, 0-63, as -dBm0. */
  readonly volume: number
  /** Duration so far, in RTP timestamp units (8000 per second). */
  readonly duration: number
}

/** A DTMF digit as the pipeline carries it. */
export type DtmfDigit = '0' | '1' | '2' | '3' | '4' | '5' | '6' | '7' | '8' | '9' | '*' | '#' | 'A' | 'B' | 'C' | 'D'

const DIGITS: readonly DtmfDigit[] = ['0', '1', '2', '3', '4', '5', '6', '7', '8', '9', '*', '#', 'A', 'B', 'C', 'D']

/** Payload bytes of one report. */
export const TELEPHONE_EVENT_BYTES = 4

/** Decodes the first report of a payload; `null` when it is shorter than one report. */
export function decodeTelephoneEvent(payload: Uint8Array): TelephoneEvent | null {
  if (payload.length < TELEPHONE_EVENT_BYTES) return null
  return {
    event: payload[0]!,
    end: (payload[1]! & 0x80) !== 0,
    volume: payload[1]! & 0x3f,
    duration: (payload[2]! << 8) | payload[3]!,
  }
}

/** Encodes one report (the reserved bit is zero). */
export function encodeTelephoneEvent(ev: TelephoneEvent): Buffer {
  const buf = Buffer.alloc(TELEPHONE_EVENT_BYTES)
  buf[0] = ev.event & 0xff
  buf[1] = (ev.end ? 0x80 : 0) | (ev.volume & 0x3f)
  buf.writeUInt16BE(Math.min(0xffff, Math.max(0, Math.round(ev.duration))), 2)
  return buf
}

/** The digit for a DTMF event code; `undefined` for other events (tones, flash). */
export function eventToDigit(event: number): DtmfDigit | undefined {
  return DIGITS[event]
}

/** The event code for a digit (case-insensitive for A-D); `undefined` for anything else. */
export function digitToEvent(digit: string): number | undefined {
  const i = DIGITS.indexOf(digit.toUpperCase() as DtmfDigit)
  return i < 0 ? undefined : i
}
