import t from 'tap'
import { readFileSync } from 'node:fs'
import { fileURLToPath } from 'node:url'
import { GATEWAY_NODE_OPTIONS, missingGatewayNodeOptions } from '../../server/gc-tuning.js'

const root = fileURLToPath(new URL('../..', import.meta.url))
const read = (file: string) => readFileSync(`${root}${file}`, 'utf8')

t.test('every way the repository starts a gateway gives Node the gateway options', async (t) => {
  t.ok(GATEWAY_NODE_OPTIONS.length > 0)
  const scripts = (JSON.parse(read('package.json')) as { scripts: Record<string, string> }).scripts
  const cmd = /^CMD (.*)$/m.exec(read('docker/Dockerfile'))?.[1]
  const shebang = read('bin/voxgate.js').split('\n')[0]
  for (const option of GATEWAY_NODE_OPTIONS) {
    t.match(scripts.start, new RegExp(`^node ${option} bin/voxgate\\.js serve$`), `npm start: ${option}`)
    t.match(scripts.bench, new RegExp(`^node ${option} `), `npm run bench (its gateways run in its process): ${option}`)
    t.ok((JSON.parse(cmd ?? '[]') as string[]).includes(option), `the Docker image: ${option}`)
    t.equal(shebang, `#!/usr/bin/env -S node ${option}`, `npx voxgate: ${option}`)
  }
})

t.test('missingGatewayNodeOptions reads the command line and NODE_OPTIONS', async (t) => {
  t.same(missingGatewayNodeOptions([], ''), GATEWAY_NODE_OPTIONS)
  t.same(missingGatewayNodeOptions(['--v8-pool-size=1'], ''), [])
  t.same(missingGatewayNodeOptions(['--import', 'tsx'], '--max-old-space-size=512 --v8-pool-size=1'), [])
  t.same(missingGatewayNodeOptions(['--v8_pool_size=1'], ''), [], 'underscores are the same option to Node')
  t.same(missingGatewayNodeOptions(['--v8-pool-size=4'], ''), [], "another value is the operator's choice")
  t.same(missingGatewayNodeOptions(['--v8-pool-sizes=1'], ''), GATEWAY_NODE_OPTIONS, 'another option is not it')
})
