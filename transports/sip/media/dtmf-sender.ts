/**
 * The RTP packets for one DTMF digit as RFC 4733 events (section 2.5.1): every packet carries the event's start
 * timestamp, the first has the marker bit, the duration grows by one packet interval per packet, and the final
 * report (E bit) is sent three times with the same duration. Sequence numbers go up by one per packet,
 * retransmissions included. The transport's pacer sends them one per 20 ms tick in place of audio.
 */
import { digitToEvent, encodeTelephoneEvent } from './telephone-event-codec.js'

/** One packet to send; `payload` is the 4-byte telephone-event report. */
export interface DtmfPacket {
  readonly marker: boolean
  readonly sequence: number
  readonly timestamp: number
  readonly payload: Buffer
  /** The report's duration, in timestamp units. */
  readonly duration: number
  readonly end: boolean
}

/** Where the digit starts in the stream and how it sounds. */
export interface DtmfSendOptions {
  readonly digit: string
  /** RTP timestamp of the event's start (the stream's current media time). */
  readonly timestamp: number
  /** Sequence number of the first packet. */
  readonly sequence: number
  /** Tone length; clamped to 40-5000 ms (well below the 16-bit duration's 8.19 s, so no segments). */
  readonly durationMs?: number
  /** Power level as -dBm0 (0-63); 10 is what most phones send. */
  readonly volume?: number
  /** Packet interval; 20 ms like the audio. */
  readonly packetMs?: number
}

/** The number of times the end report is sent (RFC 4733 section 2.5.1.4). */
export const END_REPEATS = 3

/** The packets for one digit, in send order; `null` for a character that is not a DTMF digit. */
export function dtmfPackets(options: DtmfSendOptions): DtmfPacket[] | null {
  const event = digitToEvent(options.digit)
  if (event === undefined) return null
  const step = 8 * (options.packetMs ?? 20)
  const total = 8 * Math.min(5000, Math.max(40, options.durationMs ?? 100))
  const volume = options.volume ?? 10
  const packets: DtmfPacket[] = []
  let sequence = options.sequence
  const push = (duration: number, end: boolean): void => {
    packets.push({
      marker: packets.length === 0,
      sequence: sequence & 0xffff,
      timestamp: options.timestamp >>> 0,
      payload: encodeTelephoneEvent({ event, end, volume, duration }),
      duration,
      end,
    })
    sequence++
  }
  for (let duration = step; duration < total; duration += step) push(duration, false)
  for (let i = 0; i < END_REPEATS; i++) push(total, true)
  return packets
}
