import type { OutputAudioFormat } from '../audio/audio-format.js'
import { failureDetail } from '../agent/turn-failure.js'
import type { PipelineLogger } from '../runtime/logger.js'
import type { TtsEvent, TtsStream } from '../vendors/tts/tts-stream.js'
import type { AssistantTurn } from './assistant-turn.js'
import type { PipelineEvent } from './pipeline-io.js'
import type { ReplyPlayout } from './reply-playout.js'

/** What a reply's speech needs from its pipeline. */
export interface ReplySpeechDeps {
  tts: TtsStream | undefined
  /** The transport's output format; undefined for text-only transports. */
  output: OutputAudioFormat | undefined
  /** Where the TTS's audio goes. */
  playout: Pick<ReplyPlayout, 'speech'>
  emit(e: PipelineEvent): void
  logger: PipelineLogger
  now(): number
  notice(code: string, message: string): void
  /** The reply the TTS's events are about, if any. */
  current(): AssistantTurn | undefined
  /** The TTS is done with `a` (all its audio out, or failed): the reply may finish. */
  done(a: AssistantTurn): void
}

/**
 * The words of a reply: streamed to the client as text deltas and to TTS as they come, and the TTS's events
 * (audio for playout, the end of a context, errors) brought back to the reply they belong to.
 */
export class ReplySpeech {
  readonly #d: ReplySpeechDeps

  constructor(d: ReplySpeechDeps) {
    this.#d = d
  }

  /** Replies are spoken (not text only): the session has a TTS and an audio transport. */
  get audible(): boolean {
    return this.#d.tts !== undefined && this.#d.output !== undefined
  }

  /** Says `text` in turn `a`; `fromAgent` false for the gateway's own words (holding phrase, fallback). */
  say(a: AssistantTurn, text: string, fromAgent: boolean): void {
    if (fromAgent) a.agentSpoke = true
    a.timings.firstTextAt ??= this.#d.now()
    const sep = a.text === '' || /\s$/.test(a.text) || /^\s/.test(text) ? '' : ' '
    a.text += sep + text
    this.#d.emit({ type: 'assistant.text.delta', turnId: a.turnId, content: sep + text })
    if (!a.ttsDone && this.#d.tts !== undefined) {
      a.timings.ttsRequestAt ??= this.#d.now()
      this.#d.tts.pushText(a.turnId, sep + text)
    }
  }

  /** The reply's text is complete: the TTS speaks what it still holds (nothing to speak: speech is done at once). */
  textDone(a: AssistantTurn, text: string): void {
    if (a.ttsDone) return
    if (text === '') a.ttsDone = true
    else this.#d.tts?.flush(a.turnId)
  }

  /** Barge-in: the TTS drops what it has not yet spoken of `a`. */
  cancel(a: AssistantTurn): void {
    this.#d.tts?.cancel(a.turnId)
  }

  /** One event of the session's TTS stream. */
  onTtsEvent(e: TtsEvent): void {
    const a = this.#d.current()
    if (e.type === 'audio') {
      if (!a || a.turnId !== e.contextId || a.interrupted || this.#d.output === undefined) return
      this.#d.playout.speech(a, e.audio)
    } else if (e.type === 'done') {
      if (a && a.turnId === e.contextId) this.#done(a)
    } else if (e.type === 'error') {
      this.#d.logger.warn({ code: e.code, fatal: e.fatal }, `speech synthesis: ${e.message}`)
      if (a && (e.fatal || e.contextId === a.turnId)) {
        if (a.text !== '' && !a.ttsDone) a.failure ??= { cause: 'tts_failed', detail: failureDetail(e.message), heard: null }
        this.#done(a)
      }
      if (e.fatal) this.#d.notice('tts_unavailable', 'speech synthesis is unavailable for this call: replies come as text only')
    }
  }

  /** The TTS stream ended for good: an open reply can only finish text-wise. */
  ttsEnded(): void {
    const a = this.#d.current()
    if (a && !a.ttsDone) this.#done(a)
  }

  #done(a: AssistantTurn): void {
    a.ttsDone = true
    this.#d.done(a)
  }
}
