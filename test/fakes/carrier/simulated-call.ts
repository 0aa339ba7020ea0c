/**
 * The phone's side of a connected media stream: sends `connected`, `start`, paced caller audio,
 * `dtmf` and `stop` in the carrier's wire format; plays the assistant's audio in an earpiece.
 */
import { randomBytes } from 'node:crypto'
import { performance } from 'node:perf_hooks'
import WebSocket from 'ws'
import { CallerAudio } from './caller-audio.js'
import { Earpiece, type EarpieceClear, type EarpieceMark } from './earpiece.js'

/** Protocol violations of every call in this process not yet taken by `takeProtocolViolations`, at most 1,000. */
const unclaimedViolations: string[] = []

/**
 * The protocol violations (binary frames, bad JSON, a wrong streamSid, unknown events) any simulated call saw since
 * the last call of this, each as `<CallSid>: <what>`: the carrier end-to-end files check after every test that there
 * were none (carrier-setup.ts), so no file can forget to.
 */
export function takeProtocolViolations(): string[] {
  return unclaimedViolations.splice(0, unclaimedViolations.length)
}

/** How the media stream ended. */
export interface CallEnd {
  readonly by: 'caller' | 'server' | 'error'
  readonly code: number
  readonly reason: string
  readonly at: number
}

/** One message received from the server. */
export interface ReceivedMessage {
  readonly at: number
  readonly event: string
  readonly raw: string
}

/** What `SimulatedCall.connect` needs. */
export interface SimulatedCallInit {
  readonly url: string
  readonly callSid: string
  readonly accountSid: string
  readonly customParameters: Record<string, string>
  readonly realtime: boolean
  readonly silenceWhenIdle: boolean
  readonly playbackSpeed: number
}

/** A connected media stream seen from the phone. */
export class SimulatedCall {
  readonly callSid: string
  readonly accountSid: string
  readonly streamSid = `MZ${randomBytes(16).toString('hex')}`
  readonly streamUrl: string
  readonly customParameters: Record<string, string>
  /** Every message the server sent, in order. */
  readonly messages: ReceivedMessage[] = []
  /** Protocol violations by the server (binary frames, bad JSON, wrong streamSid, unknown events). */
  readonly errors: string[] = []
  /** Marks and clears as the earpiece handled them. */
  readonly earpiece: Earpiece
  /** Resolves once the socket is open and `connected` + `start` were sent. */
  readonly opened: Promise<void>
  /** Resolves when the media stream closed, whoever closed it. */
  readonly ended: Promise<CallEnd>
  readonly #ws: WebSocket
  readonly #audio: CallerAudio
  #seq = 0
  #hangingUp = false
  #end: CallEnd | undefined
  #watchers = new Set<() => void>()

  /** Open the stream URL; resolves after `connected` and `start` were sent. */
  static async connect(init: SimulatedCallInit): Promise<SimulatedCall> {
    const call = new SimulatedCall(init, new WebSocket(init.url))
    await call.opened
    return call
  }

  private constructor(init: SimulatedCallInit, ws: WebSocket) {
    this.callSid = init.callSid
    this.accountSid = init.accountSid
    this.streamUrl = init.url
    this.customParameters = init.customParameters
    this.earpiece = new Earpiece({
      speed: init.playbackSpeed,
      onMark: (name) => {
        this.#send({ event: 'mark', sequenceNumber: this.#nextSeq(), streamSid: this.streamSid, mark: { name } })
        this.#notify()
      },
    })
    this.#audio = new CallerAudio({
      realtime: init.realtime,
      silenceWhenIdle: init.silenceWhenIdle,
      sendFrame: (frame, index) => this.#sendMedia(frame, index),
    })
    this.#ws = ws
    this.opened = new Promise((resolve, reject) => {
      this.#ws.once('open', () => {
        this.#send({ event: 'connected', protocol: 'Call', version: '1.0.0' })
        this.#send({
          event: 'start',
          sequenceNumber: this.#nextSeq(),
          start: {
            accountSid: this.accountSid,
            streamSid: this.streamSid,
            callSid: this.callSid,
            tracks: ['inbound'],
            mediaFormat: { encoding: 'audio/x-mulaw', sampleRate: 8000, channels: 1 },
            customParameters: this.customParameters,
          },
          streamSid: this.streamSid,
        })
        this.#audio.startSilence()
        resolve()
      })
      this.#ws.once('error', reject)
    })
    this.opened.catch(() => undefined)
    this.ended = new Promise((resolve) => {
      this.#ws.on('error', (err) => this.errors.push(`socket error: ${err.message}`))
      this.#ws.on('close', (code, reason) => {
        this.#audio.close()
        this.earpiece.close()
        this.#end = {
          by: this.#hangingUp ? 'caller' : code === 1006 ? 'error' : 'server',
          code,
          reason: reason.toString(),
          at: performance.now(),
        }
        this.#notify()
        resolve(this.#end)
      })
    })
    this.#ws.on('message', (data, isBinary) => this.#onMessage(data as Buffer, isBinary))
  }

  /** True until the stream closes. */
  get isOpen(): boolean {
    return this.#end === undefined
  }

  /** Caller media frames sent so far. */
  get framesSent(): number {
    return this.#audio.framesSent
  }

  /** Say more (mu-law 8 kHz); resolves when the last frame is sent. */
  sendAudio(audio: Buffer): Promise<void> {
    return this.#audio.send(audio)
  }

  /** When each `sendAudio`'s first frame was due and sent (performance.now() ms), in order. */
  get audioStarts(): readonly { frame: number; dueAt: number; sentAt: number }[] {
    return this.#audio.starts
  }

  /** Press a key. */
  sendDtmf(digit: string): void {
    this.#send({
      event: 'dtmf',
      streamSid: this.streamSid,
      sequenceNumber: this.#nextSeq(),
      dtmf: { track: 'inbound_track', digit },
    })
  }

  /** Hang up: send `stop`, close the socket, wait for the close. */
  async hangup(): Promise<CallEnd> {
    if (this.#end) return this.#end
    this.#hangingUp = true
    this.#audio.close()
    this.#send({
      event: 'stop',
      sequenceNumber: this.#nextSeq(),
      streamSid: this.streamSid,
      stop: { accountSid: this.accountSid, callSid: this.callSid },
    })
    this.#ws.close(1000, 'caller hung up')
    return this.ended
  }

  /** Every assistant byte received. */
  receivedAudio(): Buffer {
    return this.earpiece.receivedAudio()
  }

  /** What the caller has actually heard. */
  playedAudio(): Buffer {
    return this.earpiece.playedAudio()
  }

  /** Marks echoed or pending, in arrival order. */
  get marks(): readonly EarpieceMark[] {
    return this.earpiece.marks
  }

  /** Clears received. */
  get clears(): readonly EarpieceClear[] {
    return this.earpiece.clears
  }

  /** Resolve once `predicate` holds (checked on every message, echo and close). */
  waitFor(predicate: () => boolean, timeoutMs = 5000): Promise<void> {
    if (predicate()) return Promise.resolve()
    return new Promise((resolve, reject) => {
      const check = (): void => {
        if (!predicate()) return
        clearTimeout(timer)
        this.#watchers.delete(check)
        resolve()
      }
      const timer = setTimeout(() => {
        this.#watchers.delete(check)
        reject(new Error(`waitFor timed out after ${timeoutMs} ms`))
      }, timeoutMs)
      this.#watchers.add(check)
    })
  }

  #onMessage(data: Buffer, isBinary: boolean): void {
    this.#handleMessage(data, isBinary)
    this.#notify()
  }

  #handleMessage(data: Buffer, isBinary: boolean): void {
    const at = performance.now()
    if (isBinary) {
      this.#violation('binary frame')
      return
    }
    const raw = data.toString('utf8')
    let msg: { event?: unknown; streamSid?: unknown; media?: { payload?: unknown }; mark?: { name?: unknown } }
    try {
      msg = JSON.parse(raw) as typeof msg
    } catch {
      this.#violation(`not JSON: ${raw.slice(0, 60)}`)
      return
    }
    const event = typeof msg.event === 'string' ? msg.event : ''
    this.messages.push({ at, event, raw })
    if (msg.streamSid !== this.streamSid) this.#violation(`${event}: wrong streamSid ${String(msg.streamSid)}`)
    else if (event === 'media' && typeof msg.media?.payload === 'string') {
      this.earpiece.push(Buffer.from(msg.media.payload, 'base64'))
    } else if (event === 'mark' && typeof msg.mark?.name === 'string') this.earpiece.mark(msg.mark.name)
    else if (event === 'clear') this.earpiece.clear()
    else this.#violation(`unexpected message: ${raw.slice(0, 80)}`)
  }

  /** A protocol violation by the server: in this call's `errors`, and for the shared check of every call. */
  #violation(what: string): void {
    this.errors.push(what)
    if (unclaimedViolations.length < 1000) unclaimedViolations.push(`${this.callSid}: ${what}`)
  }

  #sendMedia(frame: Buffer, index: number): void {
    this.#send({
      event: 'media',
      sequenceNumber: this.#nextSeq(),
      media: { track: 'inbound', chunk: String(index + 1), timestamp: String(index * 20), payload: frame.toString('base64') },
      streamSid: this.streamSid,
    })
  }

  #nextSeq(): string {
    this.#seq += 1
    return String(this.#seq)
  }

  #send(message: object): void {
    if (this.#ws.readyState === WebSocket.OPEN) this.#ws.send(JSON.stringify(message))
  }

  #notify(): void {
    for (const check of Array.from(this.#watchers)) check()
  }
}
