/** Where the vendor lives (`https://`, `wss://` or plain `ws://` for local fakes) and its key. */
export interface VendorEndpoint {
  url: string
  apiKey: string
}

/** A vendor endpoint as configured: no key means the vendor is not configured (its plugin falls back or is off). */
export type VendorSetting = Omit<VendorEndpoint, 'apiKey'> & { apiKey: string | undefined }

/** Where and how to open the vendor socket; built fresh on every (re)connect. */
export interface VendorConnectRequest {
  url: string
  headers: Record<string, string>
}

/** Bounded reconnect policy: exponential backoff from `initialDelayMs` capped at `maxDelayMs`. */
export interface ReconnectPolicy {
  /** Failed attempts in a row before the stream gives up with a fatal error. */
  maxAttempts: number
  initialDelayMs: number
  maxDelayMs: number
  /** A connection that stayed open this long resets the attempt count. */
  stableAfterMs: number
}

/** Transport knobs shared by every vendor stream; defaults suit production, tests shorten them. */
export interface VendorTransportOptions {
  reconnect?: Partial<ReconnectPolicy>
  /** Keep-alive tick interval; 0 disables it. Each adapter has its own default. */
  keepAliveMs?: number
  /** Handshake timeout per connect attempt. Default 10 s. */
  connectTimeoutMs?: number
  /** How long close() waits for the vendor to finish and close the socket. Default 3 s. */
  closeTimeoutMs?: number
  /** Capacity of the event queue. Default 512. */
  eventQueueSize?: number
}
