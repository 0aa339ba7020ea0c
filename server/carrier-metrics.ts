import type { Metrics } from '../core/metrics.js'
import type { Carrier, CarrierCallsClient } from '../carrier/carrier.js'

/** The error code metrics count a failed carrier REST call under (`CarrierApiError.code`, else `error`). */
function errorCode(e: unknown): string {
  const code = (e as { code?: unknown } | null)?.code
  return typeof code === 'string' && /^carrier_[a-z_]+$/.test(code) ? code : 'error'
}

/** A Calls API client that counts its failures (aborts included: a timed-out hangup is a failure too). */
function countingClient(client: CarrierCallsClient, metrics: Metrics): CarrierCallsClient {
  const counted = async <T>(operation: string, call: () => Promise<T>): Promise<T> => {
    try {
      return await call()
    } catch (e) {
      metrics.carrierApiError(operation, errorCode(e))
      throw e
    }
  }
  return {
    createCall: (request) => counted('create_call', () => client.createCall(request)),
    hangup: (sid, options) => counted('hangup', () => client.hangup(sid, options)),
    updateCall: (sid, markup, options) => counted('update_call', () => client.updateCall(sid, markup, options)),
  }
}

/**
 * The carrier with its REST API failures counted. Everything else is the carrier's own (a Proxy, so a carrier
 * built as a class keeps its methods and `this`).
 */
export function withCarrierMetrics(carrier: Carrier, metrics: Metrics): Carrier {
  return new Proxy(carrier, {
    get(target, prop, receiver) {
      if (prop === 'callsClient')
        return (credentials: Parameters<Carrier['callsClient']>[0]) => countingClient(target.callsClient(credentials), metrics)
      return Reflect.get(target, prop, receiver)
    },
  })
}
