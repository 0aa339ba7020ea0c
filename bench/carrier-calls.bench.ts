// Concurrent simulated phone calls against one in-process gateway (carrier path, VAD on, zero-latency vendor
// fakes). Reports, per call count: event-loop lateness (a frame can only be late if the loop was blocked), the
// synchronous handling time of each media frame, CPU share, and memory per call. The phones run in the same
// process and their cost is included, so the figures are conservative.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { monitorEventLoopDelay } from 'node:perf_hooks';
import { loadConfig } from '../gateway/config.js';
import { silentLogger } from '../gateway/log.js';
import { bootstrap } from '../gateway/bootstrap.js';
import { startGateway } from '../gateway/app.js';
import { openStore } from '../gateway/store/database.js';
import { encodeMulaw } from '../pipeline/audio/g711-mulaw.js';
import { loadFixture } from '../test/fixtures/audio/signals.js';
import { startFakeDeepgram } from '../test/fakes/deepgram/fake-deepgram.js';
import { startFakeElevenLabs } from '../test/fakes/elevenlabs/fake-elevenlabs.js';
import { startFakeBackend } from '../test/fakes/backend/fake-backend.js';
import { placeCall, type SimulatedCall } from '../test/fakes/carrier/phone-simulator.js';
import { cpuMs, fmt, type BenchOptions, type BenchRow } from './bench-util.js';

const SECONDS = Number(process.env.CARRIER_BENCH_SECONDS ?? 10);
const COUNTS = (process.env.CARRIER_BENCH_CALLS ?? '25,50,100,200').split(',').map(Number);

async function run(calls: number): Promise<BenchRow> {
  const dir = mkdtempSync(join(tmpdir(), 'voxgate-bench-'));
  const deepgram = await startFakeDeepgram({ apiKey: 'k' });
  const elevenlabs = await startFakeElevenLabs({ apiKey: 'k', msPerChar: 20, chunkMs: 100, chunkIntervalMs: 0 });
  const store = await openStore({ dataDir: dir });
  const boot = await bootstrap(store.db);
  const frameTimes: number[] = [];
  const config = loadConfig({
    PORT: '0',
    HOST: '127.0.0.1',
    LOG_LEVEL: 'silent',
    ALLOW_INSECURE_WEBHOOKS: '1',
    PUBLIC_URL: 'https://voice.example.test',
    STT_VENDOR_A_URL: deepgram.url,
    STT_VENDOR_A_API_KEY: 'k',
    TTS_VENDOR_A_URL: elevenlabs.url,
    TTS_VENDOR_A_API_KEY: 'k',
  });
  const gateway = await startGateway({ config, store, log: silentLogger(), carrier: { frameTiming: (ms) => frameTimes.push(ms) } });
  const key = boot.createdOrganization!.apiKey;
  const api = async (method: string, path: string, body?: unknown) => {
    const r = await fetch(gateway.url + path, { method, headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' }, body: body === undefined ? undefined : JSON.stringify(body) });
    return r.json() as Promise<any>;
  };
  await store.db.updateTable('organizations').set({ max_concurrent_sessions: null }).execute();
  const agent = await api('POST', '/v1/agents', { template_id: 'voice-agent-webhook' });
  const backend = await startFakeBackend({ secret: agent.webhook_secret });
  const cfg = structuredClone(agent.config);
  cfg.plugins = cfg.plugins.map((p: any) =>
    p.use === 'agent.webhook' ? { ...p, options: { ...p.options, url: backend.url } } : p.use === 'stt.vendor_a' ? { use: 'stt.vendor_a', options: { model_id: 'nova-3', language: 'en' } } : p,
  );
  await api('POST', `/v1/agents/${agent.id}`, { config: cfg });
  const number = '+14155552671';
  await api('POST', `/v1/agents/${agent.id}/phone_numbers`, { phone_number: number });
  const wsBase = gateway.url.replace(/^http/, 'ws');
  const rewrite = (u: string) => u.replace('https://voice.example.test', gateway.url).replace('wss://voice.example.test', wsBase);
  const speech = Buffer.from(encodeMulaw(loadFixture('phrase.wav').samples));

  const progress = (m: string) => process.stderr.write(`[carrier-calls ${calls}] ${m}\n`);
  progress('gateway up');
  const phones: SimulatedCall[] = [];
  // Memory per call: heap + buffers after a GC (run with NODE_OPTIONS=--expose-gc for a stable figure).
  const gc = (globalThis as { gc?: () => void }).gc;
  const used = () => {
    gc?.();
    const m = process.memoryUsage();
    return m.heapUsed + m.arrayBuffers;
  };
  const memBefore = used();
  for (let i = 0; i < calls; i++) {
    const r = await placeCall({ voiceHookUrl: rewrite('https://voice.example.test/v1/agents/carrier/twiml'), publicUrl: 'https://voice.example.test/v1/agents/carrier/twiml', from: '+442071838750', to: number, rewriteUrl: rewrite, realtime: true, silenceWhenIdle: true, playbackSpeed: 1 });
    if (r.outcome !== 'connected') throw new Error(`call ${i} not connected: ${r.outcome}`);
    phones.push(r.call);
  }
  progress('calls connected');
  // Everyone talks, in a loop, for the measured period.
  let stopping = false;
  const talking = phones.map(async (p, i) => {
    await new Promise((r) => setTimeout(r, (i * 37) % 1000));
    // sendAudio resolves at once on a closed call: the flag keeps this from spinning on microtasks.
    while (!stopping && p.isOpen) await p.sendAudio(speech);
  });
  await new Promise((r) => setTimeout(r, 1000));
  frameTimes.length = 0;
  const loop = monitorEventLoopDelay({ resolution: 1 });
  loop.enable();
  const c0 = cpuMs();
  const t0 = performance.now();
  await new Promise((r) => setTimeout(r, SECONDS * 1000));
  const cpu = cpuMs() - c0;
  const wall = performance.now() - t0;
  loop.disable();
  const memPerCall = (used() - memBefore) / calls / 1024 / 1024;
  progress('measured; hanging up');
  stopping = true;
  await Promise.all(phones.map((p) => p.hangup()));
  progress('hung up');
  await Promise.allSettled(talking);
  progress('phones done');
  await gateway.close();
  progress('gateway closed');
  await Promise.all([backend.close(), deepgram.close(), elevenlabs.close()]);
  progress('fakes closed');
  await store.close();
  rmSync(dir, { recursive: true, force: true });
  frameTimes.sort((a, b) => a - b);
  const maxLateMs = loop.max / 1e6;
  return {
    calls,
    'frames handled': frameTimes.length,
    'frame handling p99 ms': fmt(frameTimes[Math.floor(frameTimes.length * 0.99)] ?? 0),
    'loop delay p99 ms': fmt(loop.percentile(99) / 1e6),
    'loop delay max ms': fmt(maxLateMs),
    'no frame later than 20 ms': maxLateMs <= 20 ? 'yes' : 'no',
    'CPU % of one core': fmt((100 * cpu) / wall),
    [gc ? 'MB per call (heap+buffers)' : 'MB per call (heap+buffers, no --expose-gc)']: fmt(memPerCall),
  };
}

/** Runs each call count in turn; the last "yes" row is the figure. */
export async function bench(_: BenchOptions): Promise<BenchRow[]> {
  const rows: BenchRow[] = [];
  for (const n of COUNTS) rows.push(await run(n));
  return rows;
}
