import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from 'typebox';
import type { CallSetup } from '../../calls/record.ts';
import type { CallRuntime } from '../../calls/runtime.ts';
import { websocketTransport } from '../../calls/transports/websocket.ts';
import type { VoiceKit } from '../../calls/voice/kit.ts';
import type { ResolveAccess } from './voice-plan.ts';
import { responses } from '../../http/envelope.ts';
import { notFound, unauthorized } from '../../http/errors.ts';
import { Uuid } from '../../http/schemas.ts';
import { failCall, newSession, prepareCall, startSession } from './call-run.ts';
import { connectCall, type CallDeps } from './calls.service.ts';

export interface CallSocketOptions {
  deps: CallDeps;
  runtime: CallRuntime;
  voice: VoiceKit;
  resolveAccess: ResolveAccess;
}

/**
 * GET /api/v1/calls/{callId}/ws: the call's WebSocket. It takes no API token: the single-use
 * token from the start answer is checked before the upgrade, so a used, expired or wrong
 * token is a plain 401 and no socket is opened.
 */
export const callSocketRoutes: FastifyPluginAsyncTypebox<CallSocketOptions> = async (app, { deps, runtime, voice, resolveAccess }) => {
  const prepared = new WeakMap<object, { setup: CallSetup; started: boolean }>();

  app.get('/api/v1/calls/:callId/ws', {
    websocket: true,
    config: { auth: { scope: 'public' } },
    schema: {
      tags: ['Calls'], summary: 'The call WebSocket (JSON text frames, see docs/calls.md and /asyncapi.json)',
      params: Type.Object({ callId: Uuid }),
      querystring: Type.Object({ token: Type.String({ minLength: 1, maxLength: 200 }) }, { additionalProperties: false }),
      response: responses(200, Type.Null(), [401]),
    },
    preHandler: async (request) => {
      const { callId } = request.params;
      const row = await connectCall(deps, callId, request.query.token);
      if (!row) throw unauthorized('The call token is wrong, used or expired');
      // From here the call is active: every way out must end it.
      const fail = () => failCall(deps, callId, 'client_disconnected');
      const setup = await prepareCall({ deps, resolveAccess }, row);
      if (!setup) throw notFound('The assistant or agent of this call');
      const entry = { setup, started: false };
      prepared.set(request, entry);
      // A client gone before the upgrade completes never reaches the handler.
      if (request.raw.socket.destroyed) return void (await fail());
      request.raw.socket.once('close', () => {
        if (!entry.started) void fail().catch((err: unknown) => request.log.error({ err, callId }, 'could not end an abandoned call'));
      });
    },
  }, (socket, request) => {
    // Synchronous up to start(), so no frame can arrive before the handlers are in place.
    const entry = prepared.get(request);
    if (!entry) return socket.close(1011, 'call not prepared');
    entry.started = true;
    const { setup } = entry;
    const session = newSession({ deps, runtime }, setup, request.log);
    const { transport, link } = websocketTransport(socket, {
      frame: (frame) => (frame.type === 'end' ? void session.end('client_ended') : session.userMessage(frame.text)),
      closed: () => void session.end('client_disconnected'),
    }, setup.voice?.audio);
    startSession({ voice }, session, setup, transport, link);
  });
};
