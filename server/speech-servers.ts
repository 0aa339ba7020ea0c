import type { Log } from '../core/log.js'
import { VENDOR_TABLE, type VendorRow, type VendorSettings } from '../pipeline/index.js'

/** How long a speech server of the operator's own may take to answer the start-up check. */
const PROBE_TIMEOUT_MS = 3000

/** One keyless vendor whose server did not answer at start-up. */
export interface SpeechServerProblem {
  id: string
  url: string
  cause: string
}

/**
 * Checks once, at start-up, that every configured speech server of the operator's own (the keyless vendor rows:
 * `STT_OPENAI_COMPATIBLE_URL`, `TTS_OPENAI_COMPATIBLE_URL`) answers HTTP at all (`GET {base}/models`; any status
 * counts, as whisper.cpp's server has no such path). One that does not is logged once as a warning, never fatal: a
 * GPU box may come up after the gateway, and each call tries the server again. The key is never logged.
 */
export async function checkSpeechServers(
  vendors: VendorSettings,
  log: Log,
  table: readonly VendorRow[] = VENDOR_TABLE,
): Promise<SpeechServerProblem[]> {
  const rows = table.filter((row) => row.env.keyless && vendors[row.id]?.apiKey !== undefined)
  const problems = await Promise.all(
    rows.map(async (row): Promise<SpeechServerProblem | undefined> => {
      const setting = vendors[row.id]!
      const headers: Record<string, string> = setting.apiKey ? { authorization: `Bearer ${setting.apiKey}` } : {}
      try {
        const res = await fetch(`${setting.url}/models`, { headers, signal: AbortSignal.timeout(PROBE_TIMEOUT_MS), redirect: 'manual' })
        await res.body?.cancel()
        return undefined
      } catch (error) {
        const err = error as Error & { cause?: { code?: string; message?: string } }
        const cause =
          err.name === 'TimeoutError' ? `no answer within ${PROBE_TIMEOUT_MS} ms` : (err.cause?.code ?? err.cause?.message ?? err.message)
        return { id: row.id, url: setting.url, cause }
      }
    }),
  )
  const found = problems.filter((p): p is SpeechServerProblem => p !== undefined)
  for (const p of found) {
    log.warn(
      { plugin: p.id, url: p.url, cause: p.cause },
      `${p.id}: the speech server does not answer (${p.cause}); calls will try it again`,
    )
  }
  return found
}
