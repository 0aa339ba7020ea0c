/**
 * The warm transfer legs' directory: a leg a replica waits for is found by another replica (its address), never by
 * the replica itself, and is gone once unregistered; the table holds a hash of the token, not the token.
 */
import t from 'tap'
import { silentLogger } from '../../core/log.js'
import { TransferLegs, type TransferLegHandler } from '../../gateway/transfer/transfer-legs.js'
import { transferLegKey } from '../../gateway/store/transfer-leg-directory.js'
import { testDb } from '../helpers/db.js'

const db = await testDb()
t.teardown(() => db.cleanup())
const handler: TransferLegHandler = {
  credentials: undefined,
  progress: () => undefined,
  machineVerdict: () => undefined,
  connect: () => undefined,
}

t.test('a leg published by one replica is found by another, and forgotten with its transfer', async (t) => {
  const a = new TransferLegs()
  const b = new TransferLegs()
  a.publishAt({ db: db.store.db, replicaUrl: 'http://10.0.0.11:8080', log: silentLogger() })
  b.publishAt({ db: db.store.db, replicaUrl: 'http://10.0.0.12:8080', log: silentLogger() })
  const token = a.register(handler)
  if (token === undefined) throw new Error('not registered')
  await a.publish(token, 'sess_1')
  t.equal(await b.replicaOf(token), 'http://10.0.0.11:8080', 'the other replica finds where the leg is waited for')
  t.equal(await a.replicaOf(token), undefined, 'the waiting replica holds it itself')
  t.equal(await b.replicaOf(`${token}x`), undefined, 'an unknown token is nowhere')
  const rows = await db.store.db.selectFrom('transfer_legs').selectAll().execute()
  t.equal(rows.length, 1)
  t.equal(rows[0]?.token_hash, transferLegKey(token), 'stored by hash')
  t.notOk(JSON.stringify(rows).includes(token), 'the token itself is not stored')
  a.unregister(token)
  await t.resolves(
    (async () => {
      for (let i = 0; i < 50 && (await b.replicaOf(token)) !== undefined; i++) await new Promise((r) => setTimeout(r, 20))
    })(),
  )
  t.equal(await b.replicaOf(token), undefined, 'gone once the transfer is over')
})

t.test('without a directory legs are known in-process only', async (t) => {
  const legs = new TransferLegs()
  const token = legs.register(handler)
  if (token === undefined) throw new Error('not registered')
  await legs.publish(token, 'sess_2')
  t.equal(await legs.replicaOf(token), undefined)
  t.equal(legs.get(token), handler)
})
