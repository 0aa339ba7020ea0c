/**
 * The Twilio-compatible carrier, bundled behind the carrier-neutral `Carrier` interface.
 */
import type { Carrier, CarrierCredentials } from '../carrier.js'
import { TwilioCallsClient, type TwilioCallsClientOptions } from './calls-client.js'
import { twilioMarkup } from './markup.js'
import { TwilioMediaCodec } from './media-codec.js'
import { TwilioSignatureVerifier } from './signature.js'
import { isFinalStatus, nextStatus, parseStatusCallback } from './status.js'

/** Build the Twilio-compatible `Carrier`; `clientOptions` tune every REST client it creates. */
export function createTwilioCarrier(clientOptions: TwilioCallsClientOptions = {}): Carrier {
  return {
    name: 'twilio',
    codec: new TwilioMediaCodec(),
    verifier: new TwilioSignatureVerifier(),
    markup: twilioMarkup,
    callsClient: (credentials: CarrierCredentials) => new TwilioCallsClient(credentials, clientOptions),
    parseStatusCallback,
    nextStatus,
    isFinalStatus,
  }
}
