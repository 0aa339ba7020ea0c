/**
 * The warm transfer's bridge: the caller and the human hear each other through the gateway. Each frame is relayed
 * the moment its leg delivers it (no queue, no timer: the legs' transports pace what they send), converted to the
 * other leg's format in 20 ms frames. Either direction can be muted: while the human is dialled and briefed the
 * caller hears hold audio and the human the whisper, not each other.
 */
import type { BridgeLeg } from './bridge-leg.js'
import { createFrameConverter, type FrameConverter } from './frame-converter.js'

/** A direction of the bridge, named by who hears it. */
export type BridgeDirection = 'to_human' | 'to_caller'

/** What one direction relayed. */
export interface DirectionStats {
  framesIn: number
  bytesIn: number
  framesOut: number
  bytesOut: number
  /** Pieces of audio that arrived while the direction was muted (dropped, never relayed later). */
  framesMuted: number
}

/** What the bridge relayed, per direction. */
export type BridgeStats = Record<BridgeDirection, DirectionStats>

interface Direction {
  readonly from: BridgeLeg
  readonly to: BridgeLeg
  converter: FrameConverter
  muted: boolean
  readonly stats: DirectionStats
}

/** Relays audio between a caller's leg and a human's; `start()` begins, `stop()` ends (idempotent). */
export class AudioBridge {
  readonly #directions: Record<BridgeDirection, Direction>
  readonly #unlisten: (() => void)[] = []
  #state: 'idle' | 'running' | 'stopped' = 'idle'

  /** Both directions start muted or not as `muted` says (default: neither). Nothing is listened to before `start()`. */
  constructor(legs: { caller: BridgeLeg; human: BridgeLeg }, muted: readonly BridgeDirection[] = []) {
    const direction = (from: BridgeLeg, to: BridgeLeg, name: BridgeDirection): Direction => ({
      from,
      to,
      converter: createFrameConverter(from.inputFormat, to.outputFormat),
      muted: muted.includes(name),
      stats: { framesIn: 0, bytesIn: 0, framesOut: 0, bytesOut: 0, framesMuted: 0 },
    })
    this.#directions = {
      to_human: direction(legs.caller, legs.human, 'to_human'),
      to_caller: direction(legs.human, legs.caller, 'to_caller'),
    }
  }

  /** Starts listening to both legs. A stopped bridge does not start again. */
  start(): void {
    if (this.#state !== 'idle') return
    this.#state = 'running'
    for (const name of ['to_human', 'to_caller'] as const) {
      const d = this.#directions[name]
      this.#unlisten.push(d.from.listen((audio) => this.#relay(d, audio)))
    }
  }

  /** Stops relaying `direction`: what arrives meanwhile is dropped. */
  mute(direction: BridgeDirection): void {
    this.#directions[direction].muted = true
  }

  /**
   * Relays `direction` again, from the next piece that arrives. The conversion starts afresh, so no fragment from
   * before the mute is glued to the new audio.
   */
  unmute(direction: BridgeDirection): void {
    const d = this.#directions[direction]
    if (!d.muted) return
    d.muted = false
    d.converter = createFrameConverter(d.from.inputFormat, d.to.outputFormat)
  }

  /** Whether `direction` is muted. */
  isMuted(direction: BridgeDirection): boolean {
    return this.#directions[direction].muted
  }

  /** A copy of the counts so far. */
  stats(): BridgeStats {
    return { to_human: { ...this.#directions.to_human.stats }, to_caller: { ...this.#directions.to_caller.stats } }
  }

  /** Stops listening to both legs (idempotent); nothing is relayed after it. Returns the final counts. */
  stop(): BridgeStats {
    if (this.#state !== 'stopped') {
      this.#state = 'stopped'
      for (const unlisten of this.#unlisten.splice(0)) unlisten()
    }
    return this.stats()
  }

  #relay(d: Direction, audio: Uint8Array): void {
    if (this.#state !== 'running') return
    d.stats.framesIn++
    d.stats.bytesIn += audio.length
    if (d.muted) {
      d.stats.framesMuted++
      return
    }
    for (const frame of d.converter.push(audio)) {
      d.stats.framesOut++
      d.stats.bytesOut += frame.length
      d.to.send(frame)
    }
  }
}
