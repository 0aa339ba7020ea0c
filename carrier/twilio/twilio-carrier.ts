/**
 * The Twilio-compatible carrier, bundled behind the carrier-neutral `Carrier` interface.
 */
import type { Carrier, CarrierCredentials } from '../carrier.js'
import { TwilioCallsClient, type TwilioCallsClientOptions } from './calls-client.js'
import { TwilioNumbersClient } from './numbers-client.js'
import { STREAM_PATH, streamUrl, twilioMarkup } from './markup.js'
import { MAX_FRAME_BYTES, TwilioMediaCodec } from './media-codec.js'
import { TwilioSignatureVerifier } from './signature.js'
import { isFinalStatus, nextStatus, parseStatusCallback } from './status.js'
import { parseVoiceHook } from './voice-hook.js'
import { parseMachineDetection } from './machine-detection.js'

/** Build the Twilio-compatible `Carrier`; `clientOptions` tune every REST client it creates. */
export function createTwilioCarrier(clientOptions: TwilioCallsClientOptions = {}): Carrier {
  return {
    name: 'twilio',
    mediaStream: { pathPrefix: STREAM_PATH, maxFrameBytes: MAX_FRAME_BYTES, streamUrl },
    newCodec: () => new TwilioMediaCodec(),
    verifier: new TwilioSignatureVerifier(),
    markup: twilioMarkup,
    callsClient: (credentials: CarrierCredentials) => new TwilioCallsClient(credentials, clientOptions),
    numbersClient: (credentials: CarrierCredentials) =>
      new TwilioNumbersClient(credentials, { fetch: clientOptions.fetch, requestTimeoutMs: clientOptions.requestTimeoutMs }),
    parseVoiceHook,
    parseStatusCallback,
    parseMachineDetection,
    nextStatus,
    isFinalStatus,
  }
}
