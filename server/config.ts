import { resolve } from 'node:path'
import { parseCidr } from '../core/cidr.js'
import { parseSecretKey } from '../core/secret-box.js'
import { bool, ConfigError, type Env, int, num, optionalInt, str } from './config-env.js'
import { type SipSettings, sipSettings } from './sip-config.js'
import type { RecordingObjectStoreConfig } from '../gateway/recording/object-store.js'
import {
  VENDOR_TABLE,
  availableVendors,
  type UrlPolicy,
  type VendorAvailability,
  type VendorId,
  type VendorRow,
  type VendorSetting,
  type VendorSettings,
} from '../pipeline/index.js'

export { ConfigError } from './config-env.js'
export type { SipSettings } from './sip-config.js'

const LOG_LEVELS = ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent']

/** The gateway's whole configuration, read from the environment once at start-up. */
export interface GatewayConfig {
  port: number
  host: string
  publicUrl: string
  databaseUrl: string | undefined
  dataDir: string
  /** The embedded database's shared_buffers in MB (`PGLITE_SHARED_BUFFERS_MB`); unset: PGlite's 128 MB. */
  pgliteSharedBuffersMb: number | undefined
  adminToken: string | undefined
  /** Bearer token `GET /metrics` requires; unset: metrics are open (keep the port private then). */
  metricsToken: string | undefined
  /** Seals SIP trunk passwords (`SIP_CREDENTIALS_KEY`); unset: trunks without passwords only. */
  sipCredentialsKey: Buffer | undefined
  /** OTLP/HTTP base URL for turn traces (`OTEL_EXPORTER_OTLP_ENDPOINT`); unset: no tracing code is loaded. */
  otlpEndpoint: string | undefined
  logLevel: string
  /** `ALLOW_INSECURE_WEBHOOKS` (development only): plain http and loopback past the egress rules, for every organization. */
  allowInsecureWebhooks: boolean
  /** The webhook URL policy every check uses: ALLOW_INSECURE_WEBHOOKS, and the gateway's own tunnel addresses. */
  webhookPolicy: UrlPolicy
  /** Ranges webhooks and SIP trunks may reach past the built-in egress rules (`EGRESS_ALLOW_CIDRS`). */
  egressAllowCidrs: string[]
  /** Ranges webhooks and SIP trunks may never reach (`EGRESS_DENY_CIDRS`). */
  egressDenyCidrs: string[]
  /** What the environment says that still works but should change (a renamed variable), logged at start-up. */
  warnings: string[]
  /** Trust X-Forwarded-For / X-Forwarded-Proto from a reverse proxy in front of the gateway. */
  trustProxy: boolean
  /** Price of one connected minute, charged from the organization's balance at session end. */
  usageRatePerMinute: number
  /** How long a concurrency lease lives without a heartbeat. */
  leaseTtlMs: number
  /**
   * How long a `voxgate tunnel` whose connection dropped keeps its address (the agent pointing at it) before any
   * replica restores the agent's previous webhook (`TUNNEL_LEASE_MS`); the holder renews it every third.
   */
  tunnelLeaseMs: number
  /** Longest an initiate_outbound request waits for its organization's dial slot before 503 (OUTBOUND_QUEUE_MAX_WAIT_MS). */
  outboundQueueMaxWaitMs: number
  /**
   * On SIGTERM, how long live sessions may go on before each is ended (`shutdown`, with its session.end); the
   * process exits at most a few seconds later. The default, with that slack, fits a 30 s termination period.
   */
  shutdownGraceMs: number
  /**
   * Where other replicas reach this one directly (`REPLICA_URL`), for tunnel requests landing elsewhere; default:
   * this process's own address (the first non-loopback IPv4 address when listening on all interfaces).
   */
  replicaUrl: string | undefined
  /** Processes `voxgate serve` runs on one port (node:cluster); more than 1 needs a database server. */
  workers: number
  /** Silence the caller channel of recordings around keypad digits (on unless set to 0). */
  recordingDtmfMask: boolean
  /** Recordings older than this many days are deleted; undefined keeps them. */
  recordingRetentionDays: number | undefined
  /** An S3-compatible object store finished recordings move to (`RECORDING_S3_*`); undefined keeps them in the database. */
  recordingObjectStore: RecordingObjectStoreConfig | undefined
  /** The SIP endpoint (`SIP_PORT` set); undefined: SIP is off. */
  sip: SipSettings | undefined
  /** Each vendor's URL and key, keyed by plugin id, read from the variables the vendor table names. */
  vendors: Record<VendorId, VendorSetting> & VendorSettings
}

function url(env: Env, name: string, def: string | undefined, schemes: string[]): string | undefined {
  const raw = str(env, name) ?? def
  if (raw === undefined) return undefined
  let parsed: URL
  try {
    parsed = new URL(raw)
  } catch {
    throw new ConfigError(name, `must be an absolute URL, got "${raw}"`)
  }
  if (!schemes.includes(parsed.protocol.replace(':', ''))) {
    throw new ConfigError(name, `must use ${schemes.join(' or ')}, got "${parsed.protocol.replace(':', '')}"`)
  }
  if (parsed.username || parsed.password) {
    // Credentials in a public URL would leak into markup and logs.
    if (name !== 'DATABASE_URL') throw new ConfigError(name, 'must not contain credentials')
  }
  return raw.replace(/\/+$/, '')
}

/** Every vendor's setting, in table order (so the first bad variable is the one reported). */
function vendorSettings(env: Env, table: readonly VendorRow[]): Record<VendorId, VendorSetting> & VendorSettings {
  const settings: Record<string, VendorSetting> = {}
  for (const row of table) {
    const key = str(env, row.env.key)
    // A keyless vendor (a server of the operator's own) is configured by its URL; a key, when set, is still sent.
    const apiKey = row.env.keyless && key === undefined && str(env, row.env.url) !== undefined ? '' : key
    settings[row.id] = { url: url(env, row.env.url, row.env.defaultUrl, [...row.env.schemes]) as string, apiKey }
  }
  return settings as Record<VendorId, VendorSetting>
}

/** The gateway's port when PORT is not set: off 3000, which the SPEC gives the developer's own project (`voxgate tunnel --port`). */
export const DEFAULT_PORT = 8080

/**
 * Reads and validates the configuration; throws ConfigError naming the first bad variable. `vendors` is the vendor
 * table whose variables are read (a test may add a row).
 */
export function loadConfig(env: Env = process.env, vendors: readonly VendorRow[] = VENDOR_TABLE): GatewayConfig {
  const port = int(env, 'PORT', DEFAULT_PORT, 0, 65535)
  const logLevel = (str(env, 'LOG_LEVEL') ?? 'info').toLowerCase()
  if (!LOG_LEVELS.includes(logLevel)) throw new ConfigError('LOG_LEVEL', `must be one of ${LOG_LEVELS.join(', ')}`)
  const adminToken = str(env, 'ADMIN_TOKEN')
  if (adminToken !== undefined && adminToken.length < 16) {
    throw new ConfigError('ADMIN_TOKEN', 'must be at least 16 characters long')
  }
  const workers = int(env, 'WORKERS', 1, 1, 64)
  if (workers > 1 && str(env, 'DATABASE_URL') === undefined) {
    throw new ConfigError('WORKERS', 'more than 1 needs DATABASE_URL: the embedded database belongs to one process')
  }
  const host = str(env, 'HOST') ?? '0.0.0.0'
  if (!/^[\w.:-]+$/.test(host)) throw new ConfigError('HOST', `is not a host name or address: "${host}"`)
  const publicUrl = url(env, 'PUBLIC_URL', `http://localhost:${port}`, ['http', 'https']) as string
  const allowInsecureWebhooks = bool(env, 'ALLOW_INSECURE_WEBHOOKS')
  const warnings: string[] = []
  return {
    port,
    host,
    publicUrl,
    databaseUrl: url(env, 'DATABASE_URL', undefined, ['postgres', 'postgresql']),
    dataDir: resolve(str(env, 'DATA_DIR') ?? './data'),
    // Postgres needs 2 buffers per connection it allows (100 in PGlite): 2 MB is just above that.
    pgliteSharedBuffersMb: optionalInt(env, 'PGLITE_SHARED_BUFFERS_MB', 2, 4096),
    adminToken,
    metricsToken: str(env, 'METRICS_TOKEN'),
    sipCredentialsKey: secretKey(env, 'SIP_CREDENTIALS_KEY'),
    otlpEndpoint: url(env, 'OTEL_EXPORTER_OTLP_ENDPOINT', undefined, ['http', 'https']),
    logLevel,
    allowInsecureWebhooks,
    webhookPolicy: {
      allowInsecureLoopback: allowInsecureWebhooks,
      trustedPrefixes: [new URL(`${publicUrl}/tunnel/`).href],
      insecureHint: 'plain http to a loopback host is accepted when the gateway runs with ALLOW_INSECURE_WEBHOOKS=true',
    },
    egressAllowCidrs: renamedCidrs(env, 'EGRESS_ALLOW_CIDRS', 'WEBHOOK_ALLOW_CIDRS', warnings),
    egressDenyCidrs: renamedCidrs(env, 'EGRESS_DENY_CIDRS', 'WEBHOOK_DENY_CIDRS', warnings),
    warnings,
    trustProxy: bool(env, 'TRUST_PROXY'),
    usageRatePerMinute: num(env, 'USAGE_RATE_PER_MINUTE', 0, 0),
    leaseTtlMs: int(env, 'LEASE_TTL_MS', 30_000, 3_000, 600_000),
    tunnelLeaseMs: int(env, 'TUNNEL_LEASE_MS', 15_000, 1_500, 600_000),
    outboundQueueMaxWaitMs: int(env, 'OUTBOUND_QUEUE_MAX_WAIT_MS', 30_000, 0, 50_000),
    shutdownGraceMs: int(env, 'SHUTDOWN_GRACE_MS', 20_000, 0, 600_000),
    workers,
    replicaUrl: url(env, 'REPLICA_URL', undefined, ['http', 'https'])?.replace(/\/+$/, ''),
    recordingDtmfMask: str(env, 'RECORDING_DTMF_MASK') === undefined ? true : bool(env, 'RECORDING_DTMF_MASK'),
    recordingRetentionDays: optionalInt(env, 'RECORDING_RETENTION_DAYS', 1, 36_500),
    recordingObjectStore: recordingObjectStore(env),
    sip: sipSettings(env, publicUrl, warnings),
    vendors: vendorSettings(env, vendors),
  }
}

/** A 32-byte key (64 hex digits or base64), or undefined when unset. */
function secretKey(env: Env, name: string): Buffer | undefined {
  const raw = str(env, name)
  if (raw === undefined) return undefined
  try {
    return parseSecretKey(raw)
  } catch (e) {
    throw new ConfigError(name, (e as Error).message)
  }
}

/** A CIDR list from `name`, or from its former name `old` (`warnings` says to rename it); both set: `name` wins. */
function renamedCidrs(env: Env, name: string, old: string, warnings: string[]): string[] {
  if (str(env, old) === undefined) return cidrs(env, name)
  const both = str(env, name) !== undefined
  warnings.push(both ? `${old} is ignored: ${name}, its new name, is set` : `${old} is deprecated: rename it ${name}`)
  return cidrs(env, both ? name : old)
}

/** A comma-separated list of CIDR ranges (a bare address is one host). */
function cidrs(env: Env, name: string): string[] {
  const raw = str(env, name)
  if (raw === undefined) return []
  const list = raw
    .split(',')
    .map((c) => c.trim())
    .filter((c) => c !== '')
  for (const c of list) {
    try {
      parseCidr(c)
    } catch (e) {
      throw new ConfigError(name, (e as Error).message)
    }
  }
  return list
}

function recordingObjectStore(env: Env): RecordingObjectStoreConfig | undefined {
  const bucket = str(env, 'RECORDING_S3_BUCKET')
  const others = [
    'RECORDING_S3_ENDPOINT',
    'RECORDING_S3_REGION',
    'RECORDING_S3_ACCESS_KEY_ID',
    'RECORDING_S3_SECRET_ACCESS_KEY',
    'RECORDING_S3_PREFIX',
    'RECORDING_S3_URL_TTL_SECONDS',
  ]
  if (bucket === undefined) {
    const stray = others.find((name) => str(env, name) !== undefined)
    if (stray !== undefined) throw new ConfigError(stray, 'is set but RECORDING_S3_BUCKET is not: set the bucket too')
    return undefined
  }
  if (!/^[a-z0-9][a-z0-9.-]{1,61}[a-z0-9]$/.test(bucket)) throw new ConfigError('RECORDING_S3_BUCKET', `is not a bucket name: "${bucket}"`)
  const accessKeyId = str(env, 'RECORDING_S3_ACCESS_KEY_ID')
  const secretAccessKey = str(env, 'RECORDING_S3_SECRET_ACCESS_KEY')
  if ((accessKeyId === undefined) !== (secretAccessKey === undefined)) {
    throw new ConfigError(
      accessKeyId === undefined ? 'RECORDING_S3_ACCESS_KEY_ID' : 'RECORDING_S3_SECRET_ACCESS_KEY',
      'set both RECORDING_S3_ACCESS_KEY_ID and RECORDING_S3_SECRET_ACCESS_KEY, or neither (the AWS default chain)',
    )
  }
  const prefix = str(env, 'RECORDING_S3_PREFIX') ?? 'recordings/'
  if (prefix.startsWith('/') || prefix.length > 200)
    throw new ConfigError('RECORDING_S3_PREFIX', 'must not start with / (200 characters at most)')
  return {
    bucket,
    endpoint: url(env, 'RECORDING_S3_ENDPOINT', undefined, ['http', 'https']),
    region: str(env, 'RECORDING_S3_REGION') ?? 'us-east-1',
    credentials: accessKeyId !== undefined && secretAccessKey !== undefined ? { accessKeyId, secretAccessKey } : undefined,
    prefix,
    urlTtlSeconds: int(env, 'RECORDING_S3_URL_TTL_SECONDS', 300, 10, 86_400),
  }
}

/** Which speech vendors have keys here; decides what new agents are cloned with. */
export function vendorAvailability(config: Pick<GatewayConfig, 'vendors'>): VendorAvailability {
  return availableVendors(config.vendors)
}
