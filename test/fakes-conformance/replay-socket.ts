// Conformance helper: a bare WebSocket endpoint that accepts any upgrade and lets a test replay a vendor's documented
// messages, byte for byte, to our adapter. It has none of the vendor fakes' behaviour, so what the adapter makes of a
// message is what it makes of the document, not of our fake.
import { readFileSync } from 'node:fs'
import { FakeConnection, type FakeWsServer, startFakeWsServer } from '../fakes/deepgram/fake-ws-server.js'

/** Start an accept-all WebSocket endpoint on 127.0.0.1:0. */
export function startReplaySocket(): Promise<FakeWsServer<FakeConnection>> {
  return startFakeWsServer({ verify: () => ({ accept: true }), wrap: (socket, upgrade) => new FakeConnection(socket, upgrade) })
}

/** A fixture under test/fixtures/, parsed. */
export function readFixture<T>(path: string): T {
  return JSON.parse(readFileSync(new URL(`../fixtures/${path}`, import.meta.url), 'utf8')) as T
}
