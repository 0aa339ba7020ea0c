/**
 * How a tunnel request crosses replicas: the replica a webhook request lands on publishes it on the store's
 * notification channel (Postgres NOTIFY on a server), the replica holding the tunnel's WebSocket answers the same
 * way. Each side's events are JSON strings cut into parts small enough for one NOTIFY payload, numbered per
 * request and direction so the receiver can put them back in order. Pure: no I/O.
 */
import { randomBytes } from 'node:crypto'

/** Marks the tunnel's messages on the shared channel (other subscribers skip them). */
export const RELAY_TOPIC = 'tunnel'
/** Characters of an event per part: JSON-escaped (quotes doubled at worst) it stays under the NOTIFY limit. */
export const RELAY_PART_CHARS = 3_000

/** One notification of the relay. */
export interface RelayPart {
  topic: typeof RELAY_TOPIC
  /** `req`: origin -> holder (one request); `res`: holder -> origin (batches of response events); `cancel`: the caller gave up. */
  k: 'req' | 'res' | 'cancel'
  /** The request's id (random, unique across replicas). */
  rid: string
  tunnel: string
  /** Order of the part within its direction. */
  seq: number
  /** True on the last part of one event. */
  last: boolean
  part: string
}

/** A new relay request id. */
export function newRelayId(): string {
  return randomBytes(12).toString('base64url')
}

/** Cuts one event into the parts that carry it, numbered from `firstSeq`. */
export function splitEvent(k: RelayPart['k'], rid: string, tunnel: string, event: string, firstSeq: number): RelayPart[] {
  const parts: RelayPart[] = []
  for (let i = 0; i === 0 || i < event.length; i += RELAY_PART_CHARS) {
    const part = event.slice(i, i + RELAY_PART_CHARS)
    parts.push({ topic: RELAY_TOPIC, k, rid, tunnel, seq: firstSeq + parts.length, last: i + RELAY_PART_CHARS >= event.length, part })
  }
  return parts
}

/** Parses a notification; undefined when it is not the relay's (or is malformed). */
export function decodeRelayPart(payload: string): RelayPart | undefined {
  if (!payload.startsWith(`{"topic":"${RELAY_TOPIC}"`)) return undefined
  try {
    const p = JSON.parse(payload) as RelayPart
    if (typeof p.rid !== 'string' || typeof p.seq !== 'number' || typeof p.part !== 'string' || typeof p.tunnel !== 'string')
      return undefined
    return p
  } catch {
    return undefined
  }
}

/** Encodes a part; the topic comes first so other subscribers can skip it without parsing. */
export function encodeRelayPart(p: RelayPart): string {
  return JSON.stringify({ topic: p.topic, k: p.k, rid: p.rid, tunnel: p.tunnel, seq: p.seq, last: p.last, part: p.part })
}

/**
 * Puts parts back in order and joins them into events: `push` returns every event completed by the part (none
 * while one is missing). Bounded: a stream that runs ahead by more than `maxPending` parts is broken.
 */
export class PartAssembler {
  #next = 0
  #held = new Map<number, RelayPart>()
  #current = ''
  readonly #maxPending: number
  constructor(maxPending = 1_000) {
    this.#maxPending = maxPending
  }

  push(p: RelayPart): string[] | 'overflow' {
    if (p.seq < this.#next) return []
    this.#held.set(p.seq, p)
    if (this.#held.size > this.#maxPending) return 'overflow'
    const done: string[] = []
    for (let q = this.#held.get(this.#next); q !== undefined; q = this.#held.get(this.#next)) {
      this.#held.delete(this.#next)
      this.#next += 1
      this.#current += q.part
      if (q.last) {
        done.push(this.#current)
        this.#current = ''
      }
    }
    return done
  }
}
