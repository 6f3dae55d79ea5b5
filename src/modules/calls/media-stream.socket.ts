import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from 'typebox';
import { TWILIO_AUDIO, twilioMediaStreamTransport } from '../../calls/transports/twilio.ts';
import { responses } from '../../http/envelope.ts';
import { Uuid } from '../../http/schemas.ts';
import type { CallConnector } from '../../calls/connect.ts';

/** How long a stream may stay without its `start` message (Twilio sends it right after `connected`). */
export const START_TIMEOUT_MS = 10_000;

/** The path of a call's media stream: the token sits in the path, because Twilio's `<Stream url>` takes no query string. */
export const mediaStreamPath = (callId: string, token: string) => `/api/v1/calls/${callId}/media-stream/${token}`;

/**
 * GET /api/v1/calls/{callId}/media-stream/{token}: the call as a Twilio Media Streams WebSocket,
 * for Twilio's `<Connect><Stream>` or any trunk that speaks the protocol. Like the call WebSocket
 * it takes no API token: the single-use token in the path is checked before the upgrade (401
 * when wrong, used or expired). The call must have been started for this protocol (mu-law at
 * 8 kHz): the voice opens on Twilio's `start` message, `stop` ends the call.
 */
export const mediaStreamRoutes: FastifyPluginAsyncTypebox<{ connector: CallConnector }> = async (app, { connector }) => {
  app.get('/api/v1/calls/:callId/media-stream/:token', {
    websocket: true,
    config: { auth: { scope: 'public' } },
    schema: {
      tags: ['Calls'], summary: 'A call as a Twilio Media Streams WebSocket (see docs/twilio.md)',
      params: Type.Object({ callId: Uuid, token: Type.String({ minLength: 1, maxLength: 200 }) }),
      response: responses(200, Type.Null(), [401]),
    },
    preHandler: (request) => connector.prepare(request, request.params.callId, request.params.token),
  }, (socket, request) => {
    const call = connector.connect(request);
    if (!call) return socket.close(1011, 'call not prepared');
    const { setup, session } = call;
    const plan = setup.voice;
    const log = request.log.child({ callId: setup.callId });
    let started = false;
    const { transport, link } = twilioMediaStreamTransport(socket, call.transport, {
      started(start) {
        started = true;
        clearTimeout(deadline);
        // The Twilio ids tie Parley's log to Twilio's call log; they are not secrets.
        log.info({ callSid: start.callSid, streamSid: start.streamSid, accountSid: start.accountSid }, 'media stream started');
        if (plan) connector.openVoice({ ...setup, voice: plan }, link, session, log);
      },
      dtmf: (digit) => session.dtmf(digit),
      stopped: () => void session.end('client_ended'),
      closed: () => void session.end('client_disconnected'),
      refused: (reason) => void session.fail({ source: 'transport:twilio', statusCode: null, message: reason }),
    });
    const deadline = setTimeout(() => {
      if (!started) void session.fail({ source: 'transport:twilio', statusCode: null, message: `no start message within ${START_TIMEOUT_MS / 1000} s` });
    }, START_TIMEOUT_MS).unref();
    void session.done.then(() => clearTimeout(deadline));
    session.start(transport, plan?.audio);
    if (!plan || plan.audio.encoding !== TWILIO_AUDIO.encoding || plan.audio.sampleRate !== TWILIO_AUDIO.sampleRate) {
      void session.fail({ source: 'setup', statusCode: null, message: 'this call was not started for Twilio Media Streams (start it with "protocol": "twilio")' });
    }
  });
};
