import websocket from '@fastify/websocket';
import type { FastifyInstance } from 'fastify';
import { createCallRuntime } from '../../calls/runtime.ts';
import { MAX_USER_TEXT } from '../../calls/frames.ts';
import type { Clock } from '../../clock.ts';
import { deleteGuards } from '../assistants/assistants.service.ts';
import { callRecordRoutes, callStartRoutes } from './calls.routes.ts';
import { activeCallsGuard } from './calls.service.ts';
import { callSocketRoutes } from './calls.socket.ts';

export interface CallsPluginOptions {
  clock: Clock;
}

/**
 * Calls: starting them (assistants and agents), their WebSocket, and their records. Live calls
 * end as server_shutdown before the WebSocket server closes its sockets, so every call has a
 * record and a conclusion however the process stops.
 */
export async function callsPlugin(app: FastifyInstance, opts: CallsPluginOptions): Promise<void> {
  const runtime = createCallRuntime(app.config, app.egressAllow);
  app.addHook('preClose', () => runtime.endAll('server_shutdown'));
  app.addHook('onClose', () => runtime.close());
  // A frame is at most a user message of MAX_USER_TEXT characters, with room for JSON escaping.
  await app.register(websocket, { options: { maxPayload: MAX_USER_TEXT * 6 + 1024 } });
  deleteGuards.add(activeCallsGuard);
  await app.register(callStartRoutes, { kind: 'assistant', clock: opts.clock });
  await app.register(callStartRoutes, { kind: 'agent', clock: opts.clock });
  await app.register(callSocketRoutes, { clock: opts.clock, runtime });
  await app.register(callRecordRoutes);
}
