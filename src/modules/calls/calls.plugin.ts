import websocket from '@fastify/websocket';
import { Gauge } from 'prom-client';
import type { FastifyInstance } from 'fastify';
import { MAX_USER_TEXT } from '../../calls/frames.ts';
import type { Llm } from '../../calls/llm.ts';
import { createCallRuntime } from '../../calls/runtime.ts';
import { callSocketRoutes } from './calls.socket.ts';
import { renewCallLeases, type CallDeps } from './calls.service.ts';
import type { VoiceKit } from '../../calls/voice/kit.ts';
import type { ResolveAccess } from './voice-plan.ts';

/**
 * The call WebSocket and the runtime of this process's live calls. Live calls end as
 * server_shutdown before the WebSocket server closes its sockets, so every call has a record
 * and a conclusion however the process stops; a process that dies is covered by the calls sweep.
 */
export async function callSocketPlugin(app: FastifyInstance, opts: { deps: CallDeps; llm: Llm; voice: VoiceKit; resolveAccess: ResolveAccess }): Promise<void> {
  const { ctx } = opts.deps;
  const { config } = ctx;
  const runtime = createCallRuntime({
    owner: opts.deps.owner,
    llm: opts.llm,
    send: (request) => ctx.egress.request(request),
    limits: {
      idleMs: config.callIdleMs, maxMs: config.callMaxMs, maxTurns: config.callMaxTurns,
      maxTranscriptBytes: config.callMaxTranscriptBytes, historyMessages: config.llmHistoryMessages,
    },
    leaseMs: config.callLeaseMs,
    log: ctx.log,
    renewLeases: (owner) => renewCallLeases(ctx, owner),
  });
  const { pacer } = opts.voice;
  new Gauge({
    name: 'parley_voice_frame_lateness_ms', help: 'How late 20 ms frames of voice calls were sent after their ideal time, since start',
    labelNames: ['quantile'], registers: [app.metrics],
    collect() {
      const stats = pacer.stats();
      this.set({ quantile: '0.5' }, stats.p50Ms);
      this.set({ quantile: '0.99' }, stats.p99Ms);
      this.set({ quantile: '1' }, stats.maxMs);
    },
  });
  new Gauge({ name: 'parley_voice_frames_sent', help: 'Frames of voice calls sent since start', registers: [app.metrics], collect() { this.set(pacer.stats().frames); } });
  new Gauge({ name: 'parley_voice_outputs', help: 'Voice calls speaking now (outputs on the pacer)', registers: [app.metrics], collect() { this.set(pacer.outputCount); } });
  app.addHook('preClose', () => runtime.endAll('server_shutdown'));
  app.addHook('onClose', async () => {
    runtime.close();
    await opts.voice.close();
  });
  // A frame is at most a user message of MAX_USER_TEXT characters, with room for JSON escaping
  // (an audio chunk is far smaller).
  await app.register(websocket, { options: { maxPayload: MAX_USER_TEXT * 6 + 1024 } });
  await app.register(callSocketRoutes, { deps: opts.deps, runtime, voice: opts.voice, resolveAccess: opts.resolveAccess });
}
