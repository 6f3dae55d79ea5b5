import websocket from '@fastify/websocket';
import { Gauge } from 'prom-client';
import type { FastifyInstance } from 'fastify';
import { MAX_USER_TEXT } from '../../calls/frames.ts';
import type { Llm } from '../../calls/llm.ts';
import { createCallRuntime, type CallRuntime } from '../../calls/runtime.ts';
import { callConnector } from './call-connect.ts';
import { callSocketRoutes } from './calls.socket.ts';
import { mediaStreamRoutes } from './media-stream.socket.ts';
import { renewCallLeases, type CallDeps } from './calls.service.ts';
import type { VoiceKit } from '../../calls/voice/kit.ts';
import { latenessGauges } from '../../voice/lateness.ts';
import type { ResolveAccess } from './voice-plan.ts';

/**
 * The call sockets (the call WebSocket, Twilio Media Streams) and the runtime of this process's
 * live calls. Live calls end as server_shutdown before the WebSocket server closes its sockets,
 * so every call has a record and a conclusion however the process stops; a process that dies is
 * covered by the calls sweep.
 */
/** The runtime of this process's live calls, shared by the call WebSocket and the SIP calls. */
export function processCallRuntime(deps: CallDeps, llm: Llm): CallRuntime {
  const { ctx } = deps;
  const { config } = ctx;
  return createCallRuntime({
    owner: deps.owner,
    llm,
    send: (request) => ctx.egress.request(request),
    limits: {
      idleMs: config.callIdleMs, maxMs: config.callMaxMs, maxTurns: config.callMaxTurns,
      maxTranscriptBytes: config.callMaxTranscriptBytes, historyMessages: config.llmHistoryMessages,
    },
    leaseMs: config.callLeaseMs,
    log: ctx.log,
    renewLeases: (owner) => renewCallLeases(ctx, owner),
  });
}

export async function callSocketPlugin(app: FastifyInstance, opts: { deps: CallDeps; runtime: CallRuntime; voice: VoiceKit; resolveAccess: ResolveAccess }): Promise<void> {
  const { runtime } = opts;
  const { pacer } = opts.voice;
  latenessGauges(app.metrics, 'parley_voice', {
    lateness: 'How late 20 ms frames of voice calls were sent after their ideal time, since start',
    frames: 'Frames of voice calls sent since start',
  }, () => pacer.stats());
  new Gauge({ name: 'parley_voice_outputs', help: 'Voice calls speaking now (outputs on the pacer)', registers: [app.metrics], collect() { this.set(pacer.outputCount); } });
  app.addHook('preClose', () => runtime.endAll('server_shutdown'));
  app.addHook('onClose', async () => {
    runtime.close();
    await opts.voice.close();
  });
  // A frame is at most a user message of MAX_USER_TEXT characters, with room for JSON escaping
  // (an audio chunk is far smaller).
  await app.register(websocket, { options: { maxPayload: MAX_USER_TEXT * 6 + 1024 } });
  const connector = callConnector({ deps: opts.deps, runtime, voice: opts.voice, resolveAccess: opts.resolveAccess });
  await app.register(callSocketRoutes, { connector });
  await app.register(mediaStreamRoutes, { connector });
}
