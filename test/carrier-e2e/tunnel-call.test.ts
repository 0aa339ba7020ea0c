/**
 * A phone call through the carrier simulator reaches the `voxgate init` project through `voxgate tunnel`, and
 * the project's words are what the caller hears. Two gateway replicas behind nginx round-robin (PUBLIC_URL is the
 * balancer's): the webhook requests land on both, including the one that does not hold the tunnel. With
 * DATABASE_URL the second replica is another OS process; otherwise a second gateway on the same embedded database.
 * Then the local server goes down: the webhook fails (502), the tunnel says so, and the call goes on.
 */
import t from 'tap'
import { toolSkip } from '../helpers/tool-required.js'
import { spawn } from 'node:child_process'
import { mkdtempSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { placeCall, newCallSid } from '../fakes/carrier/phone-simulator.js'
import { startFakeDeepgram, transcriptsInTurn } from '../fakes/deepgram/fake-deepgram.js'
import { startFakeElevenLabs } from '../fakes/elevenlabs/fake-elevenlabs.js'
import { freePort, hasNginx, startNginx } from '../helpers/nginx.js'
import { spawnGateway } from '../helpers/spawn-gateway.js'
import { startTestGateway } from '../helpers/gateway.js'
import { runCli, spawnCli } from '../helpers/run-cli.js'
import { eventually, newTenant, sessionOfCall, speech, startCarrierGateway } from './carrier-setup.js'

t.setTimeout(240_000)
const skip = toolSkip(hasNginx() ? false : 'needs nginx (/usr/sbin/nginx)')

t.test('a phone call reaches the init project through the tunnel, on two replicas behind a balancer', { skip }, async (t) => {
  const transcripts: string[] = []
  const deepgram = await startFakeDeepgram({ apiKey: 'dg-key', script: transcriptsInTurn(transcripts) })
  t.teardown(() => deepgram.close())
  const elevenlabs = await startFakeElevenLabs({ apiKey: 'el-key', msPerChar: 20, chunkMs: 100, chunkIntervalMs: 0 })
  t.teardown(() => elevenlabs.close())
  const lbPort = await freePort()
  const publicUrl = `http://127.0.0.1:${lbPort}`
  const vendors = {
    STT_VENDOR_A_URL: deepgram.url,
    STT_VENDOR_A_API_KEY: 'dg-key',
    TTS_VENDOR_A_URL: elevenlabs.url,
    TTS_VENDOR_A_API_KEY: 'el-key',
  }
  const c = await startCarrierGateway({ ...vendors, PUBLIC_URL: publicUrl })
  t.teardown(() => c.gw.close())
  const serverDb = c.gw.db.options.databaseUrl
  let replicaB: string
  if (serverDb !== undefined) {
    const child = await spawnGateway({
      ...vendors,
      DATABASE_URL: serverDb,
      PUBLIC_URL: publicUrl,
      ADMIN_TOKEN: '',
      ALLOW_INSECURE_WEBHOOKS: '1',
    })
    t.teardown(() => child.kill())
    replicaB = child.url
  } else {
    const b = await startTestGateway({ ...vendors, PUBLIC_URL: publicUrl }, { db: c.gw.db })
    t.teardown(() => b.close())
    replicaB = b.url
  }
  const lb = await startNginx(lbPort, [new URL(c.gw.url).host, new URL(replicaB).host])
  t.teardown(() => lb.close())

  const TOKEN = 'tunnel-call-token'
  const tenant = await newTenant(c, {
    template: 'voice-agent-webhook',
    carrier: { authToken: TOKEN },
    config: (config) => {
      config.plugins = config.plugins.map((p: { use: string; options: Record<string, unknown> }) => {
        if (p.use === 'stt.vendor_a') return { use: 'stt.vendor_a', options: { model_id: 'nova-3', language: 'en' } }
        if (p.use === 'turn_manager') return { ...p, options: { ...p.options, base_timeout_ms: 800 } }
        return p
      })
      return config
    },
  })
  const cliEnv = { VOXGATE_GATEWAY: publicUrl, VOXGATE_API_KEY: tenant.apiKey }

  // The developer's side: init the project for this agent, start it, run the tunnel in its folder.
  const dir = join(mkdtempSync(join(tmpdir(), 'voxgate-call-')), 'agent')
  const localPort = await freePort()
  const init = await runCli(['init', dir, '--agent-id', tenant.agentId, '--port', String(localPort)], { env: cliEnv })
  t.equal(init.code, 0, init.stderr)
  const startProject = () => {
    const p = spawn(process.execPath, ['server.js'], { cwd: dir, stdio: ['ignore', 'pipe', 'inherit'] })
    t.teardown(() => p.kill('SIGKILL'))
    return new Promise<typeof p>((resolve) => p.stdout!.on('data', (b: Buffer) => b.toString().includes('agent backend on') && resolve(p)))
  }
  const project = await startProject()
  // No --port: the tunnel forwards to the PORT that init wrote to the project's .env.
  const tunnel = spawnCli(['tunnel', '--tail'], { env: cliEnv, cwd: dir })
  t.teardown(() => tunnel.proc.kill('SIGKILL'))
  await tunnel.waitFor(/webhook URL: http:\/\/127\.0\.0\.1:\d+\/tunnel\//)
  t.match(tunnel.stdout(), `forwarding to: http://localhost:${localPort}/api/agent (port from PORT in`)

  /** Everything the TTS fake was asked to say, spaces dropped (the text arrives in pieces). */
  const spoken = () =>
    elevenlabs.connections
      .flatMap((conn) => conn.messages.map((m) => (typeof m.text === 'string' ? m.text : '')))
      .join('')
      .replace(/\s+/g, '')

  async function dial(say: string) {
    const callSid = newCallSid()
    transcripts.length = 0
    transcripts.push(say)
    const r = await placeCall({
      voiceHookUrl: `${publicUrl}/v1/agents/carrier/twiml`,
      authToken: TOKEN,
      from: '+442071838750',
      to: tenant.number,
      callSid,
      realtime: true,
      silenceWhenIdle: true,
      playbackSpeed: 4,
    })
    if (r.outcome !== 'connected') throw new Error(`call not connected: ${JSON.stringify(r)}`)
    return { callSid, call: r.call }
  }

  for (const [i, say] of ['what are your opening hours', 'and on sundays'].entries()) {
    const { callSid, call } = await dial(say)
    const welcomes = i + 1
    await eventually(async () => (spoken().split('Hello!Thisisyourvoxgateagent.').length > welcomes ? true : undefined), 20_000)
    await eventually(async () => (call.receivedAudio().length > 0 ? true : undefined), 20_000)
    const before = call.receivedAudio().length
    await call.sendAudio(speech('two-phrases.wav'))
    const echo = `Yousaid:${say.replace(/\s+/g, '')}.`
    await eventually(async () => (spoken().includes(echo) ? true : undefined), 20_000)
    await eventually(async () => (call.receivedAudio().length > before ? true : undefined), 20_000)
    t.pass(`call ${i + 1}: the caller heard the project's welcome and its echo of "${say}"`)
    await call.hangup()
    await eventually(async () => ((await sessionOfCall(c, callSid))?.status === 'ended' ? true : undefined), 15_000)
  }

  const relayed = lb.accessLog().filter((l) => l.method === 'POST' && l.uri.startsWith('/tunnel/'))
  t.ok(relayed.length >= 4, `the webhooks went to the tunnel address (${relayed.length} requests)`)
  t.ok(
    relayed.every((l) => l.status === 200),
    'each answered 200',
  )
  t.equal(new Set(relayed.map((l) => l.upstream)).size, 2, 'they landed on both replicas, holder of the tunnel or not')
  await tunnel.waitFor(/session\.started sess_\S+ \(carrier, from \+442071838750\)/)
  await tunnel.waitFor(
    /-> POST \/api\/agent message session \S+ turn (\S+) user: "and on sundays"\n\S+ <- turn \1 200 in \d+ ms \(\d+ bytes, 2 events\) agent: "You said: and on sundays."/,
  )
  await tunnel.waitFor(/session\.ended sess_\S+ \(caller_hangup/)

  // The local server goes down mid-call: the webhook fails, the tunnel reports it, the call goes on.
  const { callSid, call: third } = await dial('is anybody there')
  await eventually(async () => (third.receivedAudio().length > 0 ? true : undefined), 20_000)
  project.kill('SIGKILL')
  await new Promise((r) => project.once('exit', r))
  await third.sendAudio(speech('two-phrases.wav'))
  await tunnel.waitFor(
    /user: "is anybody there"\n\S+ <- turn \S+ failed after \d+ ms: the local server at http:\/\/localhost:\d+\/api\/agent did not answer \(ECONNREFUSED\)/,
  )
  await new Promise((r) => setTimeout(r, 1_500))
  t.equal((await sessionOfCall(c, callSid))?.status, 'connected', 'the call goes on after the failed turn')
  await third.hangup()
  const ended = await eventually(async () => {
    const s = await sessionOfCall(c, callSid)
    return s?.status === 'ended' ? s : undefined
  }, 15_000)
  t.equal(ended.end_reason, 'caller_hangup', 'it ended when the caller hung up')
})
