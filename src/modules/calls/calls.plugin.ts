import websocket from '@fastify/websocket';
import { Gauge } from 'prom-client';
import type { FastifyInstance } from 'fastify';
import { callConnector } from '../../calls/connect.ts';
import type { CallEngine } from '../../calls/engine.ts';
import { MAX_USER_TEXT } from '../../calls/frames.ts';
import { latenessGauges } from '../../voice/lateness-gauges.ts';
import { callSocketRoutes } from './calls.socket.ts';
import { mediaStreamRoutes } from './media-stream.socket.ts';

/**
 * The call sockets (the call WebSocket, Twilio Media Streams) over the engine's runtime of this
 * process's live calls. Live calls end as server_shutdown before the WebSocket server closes its
 * sockets, so every call has a record and a conclusion however the process stops; a process that
 * dies is covered by the calls sweep.
 */
export async function callSocketPlugin(app: FastifyInstance, opts: { engine: CallEngine }): Promise<void> {
  const { engine } = opts;
  const { runtime, voice } = engine;
  const { pacer } = voice;
  latenessGauges(app.metrics, 'parley_voice', {
    lateness: 'How late 20 ms frames of voice calls were sent after their ideal time, since start',
    frames: 'Frames of voice calls sent since start',
  }, () => pacer.stats());
  new Gauge({ name: 'parley_voice_outputs', help: 'Voice calls speaking now (outputs on the pacer)', registers: [app.metrics], collect() { this.set(pacer.outputCount); } });
  app.addHook('preClose', () => runtime.endAll('server_shutdown'));
  app.addHook('onClose', async () => {
    runtime.close();
    await voice.close();
  });
  // A frame is at most a user message of MAX_USER_TEXT characters, with room for JSON escaping
  // (an audio chunk is far smaller).
  await app.register(websocket, { options: { maxPayload: MAX_USER_TEXT * 6 + 1024 } });
  const connector = callConnector(engine);
  await app.register(callSocketRoutes, { connector });
  await app.register(mediaStreamRoutes, { connector });
}
