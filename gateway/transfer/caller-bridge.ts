/**
 * Connects a warm transfer's caller to the human's leg: an `AudioBridge` between the caller's side of the
 * session (what the caller says arrives through `listenToCaller`; what the human says is played to the caller and
 * recorded as what the caller heard) and the human's leg, plus, when the request asks, a transcriber of both legs.
 * Shared by every `WarmTransferIo`; each gives its own human leg.
 */
import type { Log } from '../../core/log.js'
import type { InputAudioFormat, OutputAudioFormat } from '../../pipeline/index.js'
import { AudioBridge } from './audio-bridge.js'
import type { BridgeLeg } from './bridge-leg.js'
import { BridgeTranscriber, type BridgeTranscriberDeps } from './bridge-transcriber.js'

/** The caller's side of a transfer, as the bridge needs it. */
export interface CallerBridgeSide {
  readonly log: Log
  readonly callerAudio: { readonly input: InputAudioFormat; readonly output: OutputAudioFormat }
  playToCaller(audio: Buffer): void
  recordHeard(audio: Buffer): void
  listenToCaller(listener: (audio: Uint8Array) => void): () => void
  readonly bridgeTranscription?: Pick<BridgeTranscriberDeps, 'openStt' | 'heard'> | undefined
}

/** A running bridge; `stop` is idempotent. */
export interface CallerBridge {
  stop(): void
}

/** Starts relaying between the caller and `human`, transcribing both when `transcribe` and the side can. */
export function bridgeCaller(side: CallerBridgeSide, human: BridgeLeg, transcribe: boolean): CallerBridge {
  const caller: BridgeLeg = {
    inputFormat: side.callerAudio.input,
    outputFormat: side.callerAudio.output,
    listen: (listener) => side.listenToCaller(listener),
    send: (frame) => {
      const audio = Buffer.from(frame)
      side.playToCaller(audio)
      side.recordHeard(audio)
    },
  }
  let bridge: AudioBridge | undefined = new AudioBridge({ caller, human })
  bridge.start()
  let transcriber: BridgeTranscriber | undefined
  const transcription = side.bridgeTranscription
  if (transcribe && transcription !== undefined) {
    transcriber = new BridgeTranscriber({ ...transcription, log: side.log })
    transcriber.add('caller', caller.inputFormat, caller.listen)
    transcriber.add('human', human.inputFormat, human.listen)
  }
  return {
    stop() {
      bridge?.stop()
      bridge = undefined
      void transcriber?.stop()
      transcriber = undefined
    },
  }
}
