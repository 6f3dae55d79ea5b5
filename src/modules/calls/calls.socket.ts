import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from 'typebox';
import { websocketTransport } from '../../calls/transports/websocket.ts';
import { responses } from '../../http/envelope.ts';
import { Uuid } from '../../http/schemas.ts';
import type { CallConnector } from '../../calls/connect.ts';

/**
 * GET /api/v1/calls/{callId}/ws: the call's WebSocket. It takes no API token: the single-use
 * token from the start answer is checked before the upgrade, so a used, expired or wrong
 * token is a plain 401 and no socket is opened.
 */
export const callSocketRoutes: FastifyPluginAsyncTypebox<{ connector: CallConnector }> = async (app, { connector }) => {
  app.get('/api/v1/calls/:callId/ws', {
    websocket: true,
    config: { auth: { scope: 'public' } },
    schema: {
      tags: ['Calls'], summary: 'The call WebSocket (JSON text frames, see docs/calls.md and /asyncapi.json)',
      params: Type.Object({ callId: Uuid }),
      querystring: Type.Object({ token: Type.String({ minLength: 1, maxLength: 200 }) }, { additionalProperties: false }),
      response: responses(200, Type.Null(), [401]),
    },
    preHandler: (request) => connector.prepare(request, request.params.callId, request.query.token),
  }, (socket, request) => {
    // Synchronous up to start(), so no frame can arrive before the handlers are in place.
    const call = connector.connect(request);
    if (!call) return socket.close(1011, 'call not prepared');
    const { setup, session } = call;
    const { transport, link } = websocketTransport(socket, {
      frame: (frame) => {
        if (frame.type === 'end') void session.end('client_ended');
        else if (frame.type === 'dtmf') for (const key of frame.digits) session.dtmf(key);
        else if (frame.type === 'tool_answer') session.toolAnswer(frame);
        else session.userMessage(frame.text);
      },
      closed: () => void session.end('client_disconnected'),
    }, setup.voice?.audio);
    session.start(transport, setup.voice?.audio);
    // The providers open while the call has started: the greeting waits for them.
    if (setup.voice && link) connector.openVoice({ ...setup, voice: setup.voice }, link, session, request.log);
  });
};
