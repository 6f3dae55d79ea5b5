import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from 'typebox';
import type { CallSetup } from '../../calls/record.ts';
import type { CallRuntime } from '../../calls/runtime.ts';
import { CallSession } from '../../calls/session.ts';
import { websocketTransport } from '../../calls/transports/websocket.ts';
import type { Clock } from '../../clock.ts';
import { responses } from '../../http/envelope.ts';
import { notFound, unauthorized } from '../../http/errors.ts';
import { Uuid } from '../../http/schemas.ts';
import { loadCallSetup } from './call-setup.ts';
import { callRecorder, connectCall, expireCall } from './calls.service.ts';

export interface CallSocketOptions {
  clock: Clock;
  runtime: CallRuntime;
}

const prepared = new WeakMap<object, { setup: CallSetup; started: boolean }>();

/**
 * GET /api/v1/calls/{callId}/ws: the call's WebSocket. It takes no API token: the single-use
 * token from the start answer is checked before the upgrade, so a used, expired or wrong
 * token is a plain 401 and no socket is opened.
 */
export const callSocketRoutes: FastifyPluginAsyncTypebox<CallSocketOptions> = async (app, { clock, runtime }) => {
  const deps = { db: app.db.kysely, clock };

  app.get('/api/v1/calls/:callId/ws', {
    websocket: true,
    config: { auth: { scope: 'public' } },
    schema: {
      tags: ['Calls'], summary: 'The call WebSocket (JSON text frames, see docs/calls.md)',
      params: Type.Object({ callId: Uuid }),
      querystring: Type.Object({ token: Type.String({ minLength: 1, maxLength: 200 }) }, { additionalProperties: false }),
      response: responses(200, Type.Null(), [401]),
    },
    preHandler: async (request) => {
      const { callId } = request.params;
      const row = await connectCall(deps, callId, request.query.token);
      if (!row) {
        await expireCall(deps, callId);
        throw unauthorized('The call token is wrong, used or expired');
      }
      // From here the call is active: every way out must end it.
      const fail = (reason: 'error' | 'client_disconnected') =>
        callRecorder(deps, callId).finish({ transcript: [], toolInvocations: [] }, reason, reason === 'error' ? 'failed' : 'abandoned');
      let setup: CallSetup | null;
      try {
        setup = await loadCallSetup(app.db.kysely, app.secrets, app.config.llmDefaultModel, row);
      } catch (err) {
        await fail('error');
        throw err;
      }
      if (!setup) {
        // Deleted between start and connect (a delete racing the start): the call fails at once.
        await fail('error');
        throw notFound('The assistant or agent of this call');
      }
      const entry = { setup, started: false };
      prepared.set(request, entry);
      // A client gone before the upgrade completes never reaches the handler.
      if (request.raw.socket.destroyed) return void (await fail('client_disconnected'));
      request.raw.socket.once('close', () => {
        if (!entry.started) void fail('client_disconnected').catch((err: unknown) => request.log.error({ err, callId }, 'could not end an abandoned call'));
      });
    },
  }, (socket, request) => {
    // Synchronous up to start(), so no frame can arrive before the handlers are in place.
    const entry = prepared.get(request);
    if (!entry) return socket.close(1011, 'call not prepared');
    entry.started = true;
    const { setup } = entry;
    const session = new CallSession(setup, {
      llm: runtime.llm, send: runtime.send, clock, log: request.log, limits: runtime.limits, recorder: callRecorder(deps, setup.callId),
    });
    runtime.track(session);
    const transport = websocketTransport(socket, {
      frame: (frame) => (frame.type === 'end' ? void session.end('client_ended') : session.userMessage(frame.text)),
      closed: () => void session.end('client_disconnected'),
    });
    session.start(transport);
  });
};
