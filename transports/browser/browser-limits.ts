/** Bounds of one browser connection. */
export interface BrowserTransportLimits {
  /** Audio a client may send ahead of real time, in ms; beyond it audio is dropped (`audio_throttled`). */
  audioBurstMs: number
  /** Non-audio messages: burst size and sustained rate per second. */
  messageBurst: number
  messagesPerSecond: number
  /** `error` messages sent back: burst size and sustained rate per second (a flood of bad frames gets silence). */
  errorBurst: number
  errorsPerSecond: number
  /** Unsent bytes on the socket above which assistant audio is dropped (a client that stopped reading). */
  maxBufferedBytes: number
  /** Bytes queued before the client can play (the welcome may start first); audio beyond it is dropped. */
  maxPendingBytes: number
  /** How long output waits for the client's `client.ready` after the socket opens before it is sent anyway. */
  readyTimeoutMs: number
}

/** Defaults: 2 s of audio burst, 50 messages then 20/s, 10 errors then 1 per 2 s, 2 MiB of unsent output, 3 s for ready. */
export const DEFAULT_BROWSER_LIMITS: BrowserTransportLimits = {
  audioBurstMs: 2_000,
  messageBurst: 50,
  messagesPerSecond: 20,
  errorBurst: 10,
  errorsPerSecond: 0.5,
  maxBufferedBytes: 2 * 1024 * 1024,
  maxPendingBytes: 2 * 1024 * 1024,
  readyTimeoutMs: 3_000,
}
