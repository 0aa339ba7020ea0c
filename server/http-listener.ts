import { createServer, type Server } from 'node:http'
import type { AddressInfo } from 'node:net'
import type Koa from 'koa'

/** How long closing waits for upgraded sockets to finish their close handshakes. */
const SERVER_CLOSE_WAIT_MS = 2_000

/** The HTTP server of `app`, not listening yet; its deadlines keep slow clients from holding sockets. */
export function httpServer(app: Koa): Server {
  const server = createServer(app.callback())
  server.requestTimeout = 60_000
  server.headersTimeout = 15_000
  return server
}

/** Listens on `port` and `host`; resolves with the address bound and the URL to reach it. */
export async function listen(server: Server, port: number, host: string): Promise<{ address: AddressInfo; url: string }> {
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject)
    server.listen(port, host, () => {
      server.off('error', reject)
      resolve()
    })
  })
  const address = server.address() as AddressInfo
  const shown = address.address === '0.0.0.0' || address.address === '::' ? '127.0.0.1' : address.address
  return { address, url: `http://${shown.includes(':') ? `[${shown}]` : shown}:${address.port}` }
}

/** Closes the server and every connection; a socket whose peer never answers the close handshake does not hold it. */
export async function closeHttp(server: Server): Promise<void> {
  const closed = new Promise<void>((resolve) => server.close(() => resolve()))
  server.closeAllConnections()
  // ws waits 30 s for a close handshake; the exit does not.
  let timer: NodeJS.Timeout | undefined
  await Promise.race([closed, new Promise<void>((resolve) => (timer = setTimeout(resolve, SERVER_CLOSE_WAIT_MS)))])
  clearTimeout(timer)
}
