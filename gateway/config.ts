import { resolve } from 'node:path'
import type { VendorSetting } from '../pipeline/vendor/vendor-transport.js'
import type { VendorAvailability } from '../pipeline/config/vendor-rewrites.js'

/** The gateway's whole configuration, read from the environment once at start-up. */
export interface GatewayConfig {
  port: number
  host: string
  publicUrl: string
  databaseUrl: string | undefined
  dataDir: string
  adminToken: string | undefined
  /** Bearer token `GET /metrics` requires; unset: metrics are open (keep the port private then). */
  metricsToken: string | undefined
  /** OTLP/HTTP base URL for turn traces (`OTEL_EXPORTER_OTLP_ENDPOINT`); unset: no tracing code is loaded. */
  otlpEndpoint: string | undefined
  logLevel: string
  allowInsecureWebhooks: boolean
  /** Trust X-Forwarded-For / X-Forwarded-Proto from a reverse proxy in front of the gateway. */
  trustProxy: boolean
  /** Price of one connected minute, charged from the organization's balance at session end. */
  usageRatePerMinute: number
  /** How long a concurrency lease lives without a heartbeat. */
  leaseTtlMs: number
  /**
   * On SIGTERM, how long live sessions may go on before each is ended (`shutdown`, with its session.end); the
   * process exits at most a few seconds later. The default, with that slack, fits a 30 s termination period.
   */
  shutdownGraceMs: number
  /** Processes `voxgate serve` runs on one port (node:cluster); more than 1 needs a database server. */
  workers: number
  /** Silence the caller channel of recordings around keypad digits (on unless set to 0). */
  recordingDtmfMask: boolean
  /** Recordings older than this many days are deleted; undefined keeps them. */
  recordingRetentionDays: number | undefined
  sttVendorA: VendorSetting
  sttVendorB: VendorSetting
  ttsVendorA: VendorSetting
  llm: VendorSetting
}

/** Raised when an environment variable has an invalid value; the message names the variable. */
export class ConfigError extends Error {
  constructor(
    readonly variable: string,
    message: string,
  ) {
    super(`${variable}: ${message}`)
    this.name = 'ConfigError'
  }
}

const LOG_LEVELS = ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent']

type Env = Record<string, string | undefined>

function str(env: Env, name: string): string | undefined {
  const v = env[name]
  return v === undefined || v.trim() === '' ? undefined : v.trim()
}

function int(env: Env, name: string, def: number, min: number, max: number): number {
  const raw = str(env, name)
  if (raw === undefined) return def
  if (!/^\d+$/.test(raw)) throw new ConfigError(name, `must be a whole number, got "${raw}"`)
  const n = Number(raw)
  if (n < min || n > max) throw new ConfigError(name, `must be between ${min} and ${max}, got ${n}`)
  return n
}

function num(env: Env, name: string, def: number, min: number): number {
  const raw = str(env, name)
  if (raw === undefined) return def
  const n = Number(raw)
  if (!Number.isFinite(n) || n < min) throw new ConfigError(name, `must be a number >= ${min}, got "${raw}"`)
  return n
}

function bool(env: Env, name: string): boolean {
  const raw = str(env, name)
  if (raw === undefined) return false
  if (['1', 'true', 'yes'].includes(raw.toLowerCase())) return true
  if (['0', 'false', 'no'].includes(raw.toLowerCase())) return false
  throw new ConfigError(name, `must be 1/true/yes or 0/false/no, got "${raw}"`)
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

function vendor(env: Env, prefix: string, defUrl: string, schemes: string[], urlVar = `${prefix}_URL`): VendorSetting {
  return { url: url(env, urlVar, defUrl, schemes) as string, apiKey: str(env, `${prefix}_API_KEY`) }
}

/** Reads and validates the configuration; throws ConfigError naming the first bad variable. */
export function loadConfig(env: Env = process.env): GatewayConfig {
  const port = int(env, 'PORT', 3000, 0, 65535)
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
  return {
    port,
    host,
    publicUrl: url(env, 'PUBLIC_URL', `http://localhost:${port}`, ['http', 'https']) as string,
    databaseUrl: url(env, 'DATABASE_URL', undefined, ['postgres', 'postgresql']),
    dataDir: resolve(str(env, 'DATA_DIR') ?? './data'),
    adminToken,
    metricsToken: str(env, 'METRICS_TOKEN'),
    otlpEndpoint: url(env, 'OTEL_EXPORTER_OTLP_ENDPOINT', undefined, ['http', 'https']),
    logLevel,
    allowInsecureWebhooks: bool(env, 'ALLOW_INSECURE_WEBHOOKS'),
    trustProxy: bool(env, 'TRUST_PROXY'),
    usageRatePerMinute: num(env, 'USAGE_RATE_PER_MINUTE', 0, 0),
    leaseTtlMs: int(env, 'LEASE_TTL_MS', 30_000, 3_000, 600_000),
    shutdownGraceMs: int(env, 'SHUTDOWN_GRACE_MS', 20_000, 0, 600_000),
    workers,
    recordingDtmfMask: str(env, 'RECORDING_DTMF_MASK') === undefined ? true : bool(env, 'RECORDING_DTMF_MASK'),
    recordingRetentionDays:
      str(env, 'RECORDING_RETENTION_DAYS') === undefined ? undefined : int(env, 'RECORDING_RETENTION_DAYS', 0, 1, 36_500),
    sttVendorA: vendor(env, 'STT_VENDOR_A', 'wss://api.deepgram.com', ['ws', 'wss']),
    sttVendorB: vendor(env, 'STT_VENDOR_B', 'wss://streaming.assemblyai.com', ['ws', 'wss']),
    ttsVendorA: vendor(env, 'TTS_VENDOR_A', 'wss://api.elevenlabs.io', ['ws', 'wss']),
    llm: vendor(env, 'LLM', 'https://api.openai.com/v1', ['http', 'https'], 'LLM_BASE_URL'),
  }
}

/** Which speech vendors have keys here; decides what new agents are cloned with. */
export function vendorAvailability(config: Pick<GatewayConfig, 'sttVendorA' | 'sttVendorB' | 'ttsVendorA'>): VendorAvailability {
  return {
    stt: { vendor_a: config.sttVendorA.apiKey !== undefined, vendor_b: config.sttVendorB.apiKey !== undefined },
    tts: { vendor_a: config.ttsVendorA.apiKey !== undefined },
  }
}
