import type Router from '@koa/router'
import { newRouter } from '../http/router.js'
import { Readable } from 'node:stream'
import type { Kysely } from 'kysely'
import type { Database } from '../../gateway/store/schema.js'
import { voxError } from '../../core/errors.js'
import { deleteRecording, findRecording, type RecordingInfo } from '../../gateway/store/recordings.js'
import { getSessionRow } from '../../gateway/store/sessions.js'
import { purgeSessionText } from '../../gateway/store/session-purge.js'
import { wavBytes, wavSize, type WavFile } from '../../gateway/recording/wav-stream.js'
import type { ApiState } from '../auth.js'
import { parseByteRange } from '../http/byte-range.js'
import { recordingObjectKeys, type RecordingObjectStore } from '../../gateway/recording/object-store.js'

/** What the recording routes need. */
export interface RecordingsRouterDeps {
  db: Kysely<Database>
  /** Where moved recordings are (RECORDING_S3_BUCKET); their downloads redirect to it. */
  objects?: RecordingObjectStore | undefined
}

const PATH = '/v1/agents/:agent_id/sessions/:session_id/recording'

/**
 * The recording download (SPEC) and its deletion (an addition). The API key rules are those of session details:
 * another organization's recording answers exactly as a missing one.
 */
export function recordingsRouter(deps: RecordingsRouterDeps): Router<ApiState> {
  const { db, objects } = deps

  /** The object store holding a moved recording; a gateway configured without it cannot serve or delete one. */
  function storeOf(rec: RecordingInfo): RecordingObjectStore {
    if (objects === undefined) throw voxError('recording_store_unavailable')
    return objects
  }
  const r = newRouter<ApiState>()

  async function recordingOf(ctx: { params: Record<string, string>; state: ApiState }): Promise<RecordingInfo> {
    const { agent_id, session_id } = ctx.params as { agent_id: string; session_id: string }
    const rec = await findRecording(db, ctx.state.organizationId, agent_id, session_id)
    if (rec === undefined || rec.status === 'failed') throw voxError('recording_not_found')
    if (rec.status === 'in_progress') throw voxError('recording_in_progress')
    return rec
  }

  r.get(PATH, async (ctx) => {
    const rec = await recordingOf(ctx)
    const mode = ctx.query.channels
    if (mode !== undefined && mode !== 'mono' && mode !== 'stereo') {
      throw voxError('validation_failed', 'channels must be mono or stereo')
    }
    if (rec.objectKey !== null) {
      // In the object store: a short-lived presigned URL, which serves byte ranges itself (clients follow redirects).
      const keys = recordingObjectKeys(rec.objectKey)
      const suffix = mode === 'mono' ? '-mono' : ''
      ctx.set('Cache-Control', 'no-store')
      ctx.redirect(await storeOf(rec).downloadUrl(mode === 'mono' ? keys.mono : keys.stereo, `${rec.sessionId}${suffix}.wav`))
      return
    }
    const file: WavFile = {
      sessionId: rec.sessionId,
      sampleRate: rec.sampleRate,
      totalSamples: rec.totalSamples ?? 0,
      channels: mode === 'mono' ? 1 : 2,
    }
    const size = wavSize(file)
    const range = parseByteRange(ctx.get('range') || undefined, size)
    ctx.set('Accept-Ranges', 'bytes')
    if (range.kind === 'unsatisfiable') {
      ctx.set('Content-Range', `bytes */${size}`)
      throw voxError('range_not_satisfiable')
    }
    const start = range.kind === 'range' ? range.start : 0
    const end = range.kind === 'range' ? range.end : size - 1
    const abort = new AbortController()
    ctx.req.once('close', () => abort.abort())
    ctx.status = range.kind === 'range' ? 206 : 200
    if (range.kind === 'range') ctx.set('Content-Range', `bytes ${start}-${end}/${size}`)
    ctx.type = 'audio/wav'
    ctx.set('Content-Disposition', `attachment; filename="${rec.sessionId}.wav"`)
    ctx.body = Readable.from(wavBytes(db, file, start, end, abort.signal))
    ctx.length = end - start + 1
  })

  // Addition (privacy controls): what was silenced and paused, in ms of the file. Any recording of the session answers, so a
  // caller can check a recording in progress or one that failed too.
  r.get(`${PATH}/metadata`, async (ctx) => {
    const { agent_id, session_id } = ctx.params as { agent_id: string; session_id: string }
    const rec = await findRecording(db, ctx.state.organizationId, agent_id, session_id)
    if (rec === undefined) throw voxError('recording_not_found')
    ctx.body = {
      session_id: rec.sessionId,
      status: rec.status,
      sample_rate: rec.sampleRate,
      duration_ms: rec.totalSamples === null ? null : Math.round((rec.totalSamples * 1000) / rec.sampleRate),
      silenced: rec.silencedSpans,
      paused: rec.pausedSpans,
      held: rec.heldSpans,
    }
  })

  r.delete(PATH, async (ctx) => {
    const rec = await recordingOf(ctx).catch((e: unknown) => {
      // A failed recording has no audio but may still be deleted (its row goes).
      if (e instanceof Error && 'code' in e && e.code === 'recording_not_found') return undefined
      throw e
    })
    const { agent_id, session_id } = ctx.params as { agent_id: string; session_id: string }
    const found = rec ?? (await findRecording(db, ctx.state.organizationId, agent_id, session_id))
    if (found === undefined) throw voxError('recording_not_found')
    if (!(await deleteEverywhere(found))) throw voxError('recording_not_found')
    ctx.status = 204
  })

  /** Deletes a recording's files (first: a store that fails leaves the recording whole) and its row; false if gone. */
  async function deleteEverywhere(found: RecordingInfo): Promise<boolean> {
    if (found.objectKey !== null) {
      const store = storeOf(found)
      await store.delete(Object.values(recordingObjectKeys(found.objectKey))).catch((e: unknown) => {
        throw voxError('recording_store_failed', undefined, { cause: e })
      })
    }
    return (await deleteRecording(db, found.sessionId)) !== undefined
  }

  // Addition (privacy controls): purge what a finished session kept. A recording still being made is refused like the
  // session: both wait for the end.
  r.delete('/v1/agents/:agent_id/sessions/:session_id/data', async (ctx) => {
    const { agent_id, session_id } = ctx.params as { agent_id: string; session_id: string }
    const row = await getSessionRow(db, ctx.state.organizationId, agent_id, session_id)
    if (row === undefined) throw voxError('session_not_found')
    const found = await findRecording(db, ctx.state.organizationId, agent_id, session_id)
    if (row.status !== 'ended' || found?.status === 'in_progress') throw voxError('session_not_ended')
    const recordingDeleted = found === undefined ? false : await deleteEverywhere(found)
    const text = await purgeSessionText(db, row.id)
    ctx.body = {
      session_id: row.id,
      transcript_turns: text.transcriptTurns,
      recording_deleted: recordingDeleted,
      webhook_deliveries: text.webhookDeliveries,
    }
  })

  return r
}
