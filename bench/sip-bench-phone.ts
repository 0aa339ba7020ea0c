// A phone of the SIP benchmark's world: the tests' SIP caller (test/helpers/sip-caller.ts: a real SIP dialog over
// UDP, RTP paced at 20 ms both ways; or SIP over TLS with SDES-SRTP) with what the world needs of a bench phone (talk in a loop, hang up, count
// frames) and the longest gap between the gateway's RTP packets it heard. Every request a phone sends waits for
// its turn on a shared pace: a trunk is one source address, and the gateway's flood limit allows it 20 requests a
// second (bursts of 40), so 100 calls dialled at once would be dropped, as a real trunk's would.
import { SipCaller } from '../test/helpers/sip-caller.js'

/** Waits for the next of `perSecond` evenly spaced turns shared by everyone who calls it. */
export function pacer(perSecond: number): () => Promise<void> {
  let next = 0
  return async () => {
    const now = performance.now()
    const at = Math.max(now, next)
    next = at + 1000 / perSecond
    if (at > now) await new Promise((r) => setTimeout(r, at - now))
  }
}

/** One SIP call of the bench, connected. */
export class BenchSipPhone {
  framesSent = 0
  #hungUp = false
  #worstGapMs = 0
  #lastHeardAt: number | undefined

  private constructor(
    readonly caller: SipCaller,
    private readonly pace: () => Promise<void>,
  ) {}

  /**
   * Dials `number` at the gateway's SIP address (or, with `tls`, at its TLS port from `tls.address`, offering
   * SDES-SRTP; with `comfortNoise`, offering CN); throws unless the call is answered.
   */
  static async dial(
    gateway: { host: string; port: number },
    number: string,
    pace: () => Promise<void>,
    tls?: { port: number; ca: string; address: string },
    comfortNoise = false,
  ): Promise<BenchSipPhone> {
    const caller =
      tls === undefined
        ? await SipCaller.open(gateway)
        : await SipCaller.openTls({ host: gateway.host, port: tls.port }, tls.ca, tls.address)
    try {
      await pace()
      caller.invite(number, { srtp: tls !== undefined, comfortNoise })
      const answer = await caller.final(15_000)
      if (answer.status !== 200) throw new Error(`INVITE answered ${answer.status} ${answer.reason}`)
      // The ACK is a request too, but it comes right after: the pace's budget keeps room for one per call.
      caller.ack(answer)
      return new BenchSipPhone(caller, pace)
    } catch (e) {
      await caller.close()
      throw e
    }
  }

  /** Until the caller hangs up or the gateway's BYE came. */
  get isOpen(): boolean {
    return !this.#hungUp && this.caller.byes.items.length === 0
  }

  /** Says `ulaw` (20 ms packets in real time), then notes the gaps in what it heard meanwhile. */
  async sendAudio(ulaw: Buffer): Promise<void> {
    await this.caller.speak(ulaw)
    this.framesSent += Math.ceil(ulaw.length / 160)
    this.#noteGaps()
  }

  /** The longest gap between two RTP packets heard since the last call (ms, on this process's clock). */
  takeWorstGap(): number {
    this.#noteGaps()
    const worst = this.#worstGapMs
    this.#worstGapMs = 0
    return worst
  }

  /** BYE (on the pace) and its 200, then the sockets close; a call the gateway ended only closes. */
  async hangup(): Promise<void> {
    if (this.isOpen) {
      this.#hungUp = true
      await this.pace()
      this.caller.bye()
      await this.caller.final(10_000).catch(() => undefined)
    }
    this.#hungUp = true
    await this.caller.close()
  }

  /** Reads the packets heard so far and forgets them, so a long run keeps no more than a phrase's worth. */
  #noteGaps(): void {
    for (const p of this.caller.heard) {
      if (this.#lastHeardAt !== undefined) this.#worstGapMs = Math.max(this.#worstGapMs, p.at - this.#lastHeardAt)
      this.#lastHeardAt = p.at
    }
    this.caller.heard.length = 0
  }
}
