/**
 * A self-signed certificate made at test time with the openssl command line (node's crypto cannot make X.509):
 * for 127.0.0.1 and localhost, valid a day, in a temporary folder removed at teardown.
 */
import { execFileSync } from 'node:child_process'
import { mkdtempSync, readFileSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'

/** The files and their PEM text. */
export interface TestCertificate {
  readonly certPath: string
  readonly keyPath: string
  readonly cert: string
  readonly key: string
}

/** Makes a key and a certificate naming `names` (IP:127.0.0.1 and DNS:localhost by default). */
export function selfSignedCertificate(t: { teardown(fn: () => unknown): void }, names = 'IP:127.0.0.1,DNS:localhost'): TestCertificate {
  const dir = mkdtempSync(join(tmpdir(), 'voxgate-tls-'))
  t.teardown(() => rmSync(dir, { recursive: true, force: true }))
  const certPath = join(dir, 'cert.pem')
  const keyPath = join(dir, 'key.pem')
  execFileSync(
    'openssl',
    ['req', '-x509', '-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:prime256v1', '-nodes', '-days', '1'].concat([
      '-subj',
      '/CN=voxgate-test',
      '-addext',
      `subjectAltName=${names}`,
      '-keyout',
      keyPath,
      '-out',
      certPath,
    ]),
    { stdio: 'ignore' },
  )
  return { certPath, keyPath, cert: readFileSync(certPath, 'utf8'), key: readFileSync(keyPath, 'utf8') }
}
