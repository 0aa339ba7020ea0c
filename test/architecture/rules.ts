/**
 * The architecture rules as data: the one table that test/architecture/imports.test.ts checks and that
 * docs/architecture.md shows. Change a rule here and on that page together, in the same commit.
 */

/** One part of the code base: a folder and what it may import. */
export interface PartRule {
  /** Folder relative to the repository root, with a trailing slash. */
  readonly folder: string
  /**
   * Parts this part may import besides itself; a file path (`carrier/carrier.ts`) allows that one file of
   * another part and nothing else of it; `'any'` is for the wiring.
   */
  readonly mayImport: readonly string[] | 'any'
  /** What lives there, for failure messages. */
  readonly holds: string
}

/** A folder with one way in: outside the exempt parts, nothing imports a file of `folder` but `door`. */
export interface Door {
  /** Folder relative to the repository root, with a trailing slash. */
  readonly folder: string
  /** The one file of `folder` others may import. */
  readonly door: string
  /** Parts that may import any file of `folder` (the folder's own part, the wiring). */
  readonly exempt: readonly string[]
}

/** The rules' shape, so the checker's own tests can feed it other rules. */
export interface Architecture {
  readonly roots: readonly string[]
  /** Client folders (built apart, no parts): only the file rules (no file loops, no long files) apply there. */
  readonly clientRoots: readonly string[]
  readonly parts: Readonly<Record<string, PartRule>>
  readonly doors: readonly Door[]
  /** No source file is longer than `maxLines`, except generated ones (their first line matches `generated`). */
  readonly fileLength: { readonly maxLines: number; readonly generated: RegExp }
  readonly codecs: { readonly basenames: readonly string[]; readonly patterns: readonly RegExp[]; readonly forbidden: readonly string[] }
}

/** The rules. Parts are matched by the longest folder that contains a file; a file in no part fails. */
export const ARCHITECTURE: Architecture = {
  /** Folders whose `.ts` files are checked against every rule (test/ and bench/ are not), from the floor up. */
  roots: ['core', 'pipeline', 'carrier', 'gateway', 'transports', 'api', 'server', 'cli'],
  clientRoots: ['client/src', 'client/console', 'client/demo'],

  parts: {
    core: { folder: 'core/', mayImport: [], holds: 'errors, log, ids, phone numbers: the floor' },
    pipeline: { folder: 'pipeline/', mayImport: [], holds: 'the transport-agnostic voice pipeline' },
    'gateway/store': { folder: 'gateway/store/', mayImport: ['core'], holds: 'Postgres tables and queries' },
    'gateway/webhooks': { folder: 'gateway/webhooks/', mayImport: ['core', 'pipeline'], holds: 'webhook delivery and the egress policy' },
    'gateway/recording': {
      folder: 'gateway/recording/',
      mayImport: ['core', 'gateway/store', 'pipeline'],
      holds: 'session recordings: the recorder, chunks, the object store, retention',
    },
    'gateway/sessions': {
      folder: 'gateway/sessions/',
      mayImport: ['core', 'gateway/store', 'gateway/webhooks', 'gateway/recording', 'pipeline'],
      holds: 'CallSession and the session manager, its taps, its ports (the two sides of a transport) and transcripts',
    },
    'gateway/transfer': {
      folder: 'gateway/transfer/',
      mayImport: ['core', 'gateway/store', 'gateway/webhooks', 'gateway/sessions', 'pipeline'],
      holds: "warm transfers: the machine, the hold line, the bridge, each channel's legs",
    },
    'gateway/admission': {
      folder: 'gateway/admission/',
      mayImport: ['core', 'gateway/store', 'gateway/webhooks', 'gateway/sessions', 'gateway/transfer', 'pipeline'],
      holds: 'call admission: authorize, the voice hook, SIP trunks, waiting calls, call progress, the watchdog',
    },
    'gateway/outbound': {
      folder: 'gateway/outbound/',
      mayImport: ['core', 'gateway/store', 'gateway/webhooks', 'gateway/sessions', 'gateway/admission', 'pipeline'],
      holds: 'outbound calls: the carrier and SIP trunk dials, pacing, machine detection',
    },
    'gateway/campaigns': {
      folder: 'gateway/campaigns/',
      mayImport: ['core', 'gateway/store', 'gateway/sessions', 'gateway/admission', 'gateway/outbound', 'gateway/webhooks', 'pipeline'],
      holds: 'outbound campaigns: the dialer, outcomes, retries, lifecycle webhooks',
    },
    'gateway/tunnels': {
      folder: 'gateway/tunnels/',
      mayImport: ['core', 'gateway/store', 'pipeline'],
      holds: 'voxgate tunnel: the WebSocket endpoint, the relay between replicas, leases',
    },
    'transports/http': { folder: 'transports/http/', mayImport: ['core', 'gateway/sessions'], holds: 'upgrade and static-file plumbing' },
    'transports/browser': {
      folder: 'transports/browser/',
      mayImport: ['core', 'gateway/sessions', 'transports/http', 'pipeline'],
      holds: 'the browser transport',
    },
    'transports/media-stream': {
      folder: 'transports/media-stream/',
      mayImport: ['core', 'gateway/sessions', 'gateway/admission', 'gateway/transfer', 'transports/http', 'pipeline', 'carrier/carrier.ts'],
      holds: 'the media-stream transport every carrier shares',
    },
    // The SIP transport, in five parts from the floor up (each folder's README says what lives there).
    'transports/sip': { folder: 'transports/sip/', mayImport: ['core'], holds: 'what every SIP part shares: the timer scheduler' },
    'transports/sip/message': {
      folder: 'transports/sip/message/',
      mayImport: ['core'],
      holds: 'SIP messages, URIs, SDP and multipart bodies, digest headers, Via rules: pure codecs',
    },
    'transports/sip/transactions': {
      folder: 'transports/sip/transactions/',
      mayImport: ['core', 'transports/sip', 'transports/sip/message'],
      holds: 'RFC 3261 transactions, their timers and tables',
    },
    'transports/sip/media': {
      folder: 'transports/sip/media/',
      mayImport: ['core', 'transports/sip'],
      holds: 'RTP, RTCP, SRTP, DTMF events, the jitter buffer and pacer, SDP offer/answer, RTP ports',
    },
    'transports/sip/calls': {
      folder: 'transports/sip/calls/',
      mayImport: ['core', 'pipeline', 'transports/sip', 'transports/sip/message', 'transports/sip/transactions', 'transports/sip/media'],
      holds: 'dialogs: inbound and outbound calls, REFER, session timers, digest auth, the admission question',
    },
    'transports/sip/endpoint': {
      folder: 'transports/sip/endpoint/',
      mayImport: [
        'core',
        'pipeline',
        'transports/sip',
        'transports/sip/message',
        'transports/sip/transactions',
        'transports/sip/media',
        'transports/sip/calls',
      ],
      holds: 'the SIP port: UDP, TCP and TLS listeners, flood limits, the request handler',
    },
    'transports/sip/admission': {
      folder: 'transports/sip/admission/',
      mayImport: [
        'core',
        'pipeline',
        'gateway/sessions',
        'gateway/admission',
        'transports/sip',
        'transports/sip/message',
        'transports/sip/calls',
      ],
      holds: 'an INVITE admitted by the gateway: the INVITE as plain values, the trunk digest, refusals as SIP answers',
    },
    carrier: { folder: 'carrier/', mayImport: ['core'], holds: 'the Carrier interface and one folder per carrier' },
    api: {
      folder: 'api/',
      mayImport: [
        'core',
        'gateway/store',
        'gateway/recording',
        'gateway/sessions',
        'gateway/transfer',
        'gateway/admission',
        'gateway/outbound',
        'gateway/campaigns',
        'gateway/webhooks',
        'gateway/tunnels',
        'pipeline',
        'carrier/carrier.ts',
      ],
      holds: 'REST routes, auth, validation, error bodies',
    },
    server: { folder: 'server/', mayImport: 'any', holds: 'the wiring: app, bootstrap, config' },
    cli: { folder: 'cli/', mayImport: ['core', 'server', 'gateway/store', 'gateway/tunnels'], holds: 'the voxgate command' },
  },

  /**
   * One row per door: outside the exempt parts, the only file of the folder anyone imports is its door. The carrier's
   * interface; the pipeline's index (it only re-exports, so the inside can be rearranged freely).
   */
  doors: [
    { folder: 'carrier/', door: 'carrier/carrier.ts', exempt: ['carrier', 'server'] },
    { folder: 'pipeline/', door: 'pipeline/index.ts', exempt: ['pipeline'] },
  ],

  /** A file over this is asking to be split by concept (STYLE.md says ~300). */
  fileLength: { maxLines: 400, generated: /^\/\/ Generated .*: do not edit\.?$/ },

  /** Codecs map wire <-> typed values and may not reach I/O, directly or through our own modules. */
  codecs: {
    /** Matched by file name in any folder, so moves keep them covered. */
    basenames: [
      'media-codec.ts',
      'media-frame-scanner.ts',
      'markup.ts',
      'signature.ts',
      'status.ts',
      'voice-hook.ts',
      'browser-codec.ts',
      'sse-decoder.ts',
      'openai-chat-codec.ts',
      'backend-event.ts',
    ],
    /** Any `*-codec.ts`, and every file in a folder named audio/ inside pipeline/. */
    patterns: [/-codec\.ts$/, /^pipeline\/(?:.+\/)?audio\/.+\.ts$/],
    /** Modules that do I/O; `node:x` and bare `x` are the same builtin, subpaths (`ws/lib/x`) count. */
    forbidden: [
      'node:net',
      'node:http',
      'node:https',
      'node:http2',
      'node:dgram',
      'node:fs',
      'node:fs/promises',
      'node:child_process',
      'node:worker_threads',
      'ws',
      'pg',
      'kysely',
      '@electric-sql/pglite',
      'koa',
      '@koa/router',
      'undici',
      'onnxruntime-node',
    ],
  },
}
