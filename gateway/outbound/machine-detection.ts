/**
 * Answering machine detection of outbound calls (an addition to the SPEC): a verdict, from the carrier's
 * asynchronous detection (its callback may land on any replica) or the gateway's own beep detector, is stored on
 * the session (`answered_by`) and handed to the session wherever it runs, which asks the agent.
 */
import type { MachineVerdict } from '../../core/machine-verdict.js'
import { storeAnsweredBy } from '../store/carrier-calls.js'
import type { SessionRow } from '../store/schema.js'
import type { CallDeps } from '../admission/call-deps.js'

/** Stores `verdict` (the first stands; `machine` may become `machine_beep`) and, if it is news, tells the session. */
export async function applyMachineVerdict(
  deps: Pick<CallDeps, 'db' | 'log' | 'sessions'>,
  session: SessionRow,
  verdict: MachineVerdict,
  source: 'carrier' | 'gateway',
): Promise<void> {
  const row = await storeAnsweredBy(deps.db, session.id, verdict)
  deps.log.info({ session_id: session.id, verdict, source, stored: row !== undefined }, 'machine detection verdict')
  if (row === undefined || row.status !== 'connected') return
  await deps.sessions.verdictAnywhere(session.id, verdict)
}
