/**
 * The architecture rules as data: the one table that test/architecture/imports.test.ts checks and that
 * docs/architecture.md shows. Change a rule here and on that page together, in the same commit.
 */

/** One part of the code base: a folder (or only the files directly in it) and what it may import. */
export interface PartRule {
  /** Folder relative to the repository root, with a trailing slash. */
  readonly folder: string
  /** Only the files directly in `folder` belong to the part, not its subfolders (the gateway wiring). */
  readonly directOnly?: boolean
  /**
   * Parts this part may import besides itself; a file path (`carrier/carrier.ts`) allows that one file of
   * another part and nothing else of it; `'any'` is for the wiring.
   */
  readonly mayImport: readonly string[] | 'any'
  /** What lives there, for failure messages. */
  readonly holds: string
}

/** The rules' shape, so the checker's own tests can feed it other rules. */
export interface Architecture {
  readonly roots: readonly string[]
  readonly parts: Readonly<Record<string, PartRule>>
  readonly carrierDoor: { readonly folder: string; readonly door: string; readonly exempt: readonly string[] }
  readonly codecs: { readonly basenames: readonly string[]; readonly patterns: readonly RegExp[]; readonly forbidden: readonly string[] }
}

/** The rules. Parts are matched by the longest folder that contains a file; a file in no part fails. */
export const ARCHITECTURE: Architecture = {
  /** Folders whose `.ts` files are checked (test/, bench/ and client/ are not). */
  roots: ['core', 'gateway', 'api', 'carrier', 'pipeline', 'cli', 'transports'],

  parts: {
    core: { folder: 'core/', mayImport: [], holds: 'errors, log, ids, phone numbers: the floor' },
    pipeline: { folder: 'pipeline/', mayImport: [], holds: 'the transport-agnostic voice pipeline' },
    'gateway/store': { folder: 'gateway/store/', mayImport: ['core'], holds: 'Postgres tables and queries' },
    'gateway/webhooks': { folder: 'gateway/webhooks/', mayImport: ['core', 'pipeline'], holds: 'webhook delivery and the egress policy' },
    'gateway/sessions': {
      folder: 'gateway/sessions/',
      mayImport: ['core', 'gateway/store', 'gateway/webhooks', 'pipeline'],
      holds: 'CallSession, admission, leases',
    },
    'gateway/http': { folder: 'gateway/http/', mayImport: ['core', 'gateway/sessions'], holds: 'upgrade and static-file plumbing' },
    'gateway/browser': {
      folder: 'gateway/browser/',
      mayImport: ['core', 'gateway/sessions', 'gateway/http', 'pipeline'],
      holds: 'the browser transport',
    },
    'gateway/tunnels': {
      folder: 'gateway/tunnels/',
      mayImport: ['core', 'gateway/store', 'pipeline'],
      holds: 'voxgate tunnel: the WebSocket endpoint, the relay between replicas, leases',
    },
    gateway: { folder: 'gateway/', directOnly: true, mayImport: 'any', holds: 'the wiring: app, bootstrap, config' },
    api: {
      folder: 'api/',
      mayImport: ['core', 'gateway/store', 'gateway/sessions', 'gateway/webhooks', 'gateway/tunnels', 'pipeline', 'carrier/carrier.ts'],
      holds: 'REST routes, auth, validation, error bodies',
    },
    carrier: {
      folder: 'carrier/',
      mayImport: ['core', 'gateway/sessions', 'gateway/http', 'pipeline'],
      holds: 'the Carrier interface, one folder per carrier, the media-stream transport',
    },
    cli: { folder: 'cli/', mayImport: ['core', 'gateway', 'gateway/store', 'gateway/tunnels'], holds: 'the voxgate command' },
    'transports/sip': {
      folder: 'transports/sip/',
      mayImport: ['core', 'pipeline/contract.ts'],
      holds: 'the SIP transport: message, SDP, RTP and DTMF codecs, digest auth, jitter buffer, pacer, transactions',
    },
  },

  /** Outside the exempt parts, the only file of carrier/ anyone imports is the interface. */
  carrierDoor: { folder: 'carrier/', door: 'carrier/carrier.ts', exempt: ['carrier', 'gateway'] },

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
