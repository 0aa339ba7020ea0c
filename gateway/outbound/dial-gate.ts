/**
 * The last step of outbound pacing: a call dials at its database slot, and never sooner than one interval after
 * the organization's previous dial from any replica (the database records each). A slot dialled late (a busy
 * event loop, a lock wait) then pushes the next one back instead of letting the two reach the carrier closer
 * together than its rate.
 */
import type { Kysely } from 'kysely'
import { setTimeout as sleep } from 'node:timers/promises'
import { passDialGate } from '../store/outbound-pacing.js'
import type { Database } from '../store/schema.js'

/**
 * Resolves when the call may dial: at `dialAtEpochMs` (by the database's clock) and past the gate, with the time
 * the gate recorded for it.
 */
export async function waitForDial(
  db: Kysely<Database>,
  organizationId: string,
  dialAtEpochMs: number,
  signal?: AbortSignal,
): Promise<Date> {
  const early = dialAtEpochMs - Date.now()
  if (early > 0) await sleep(early, undefined, { signal })
  for (;;) {
    signal?.throwIfAborted()
    const gate = await passDialGate(db, organizationId)
    if (gate.passed) return gate.at
    await sleep(gate.leftMs, undefined, { signal })
  }
}
