import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from 'typebox';
import type { CallFailure, CallSetup } from '../../calls/record.ts';
import type { CallRuntime } from '../../calls/runtime.ts';
import { CallSession } from '../../calls/session.ts';
import { TemplateTooLongError } from '../../calls/template.ts';
import { websocketTransport } from '../../calls/transports/websocket.ts';
import { openVoice, VoiceOpenError } from '../../calls/voice/attach.ts';
import type { VoiceKit } from '../../calls/voice/kit.ts';
import type { ResolveAccess } from './voice-plan.ts';
import { responses } from '../../http/envelope.ts';
import { notFound, unauthorized } from '../../http/errors.ts';
import { Uuid } from '../../http/schemas.ts';
import { loadCallSetup } from './call-setup.ts';
import { callRecorder, connectCall, type CallDeps } from './calls.service.ts';

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
  const { ctx } = deps;
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
      const fail = (reason: 'error' | 'client_disconnected', failure: CallFailure | null = null) =>
        callRecorder(deps, callId).finish({ reason, outcome: reason === 'error' ? 'failed' : 'abandoned', failure, transcript: [], toolInvocations: [] });
      let setup: CallSetup | null;
      try {
        setup = await loadCallSetup(ctx.db.kysely, ctx.secrets, ctx.config.llmDefaultModel, row, resolveAccess);
      } catch (err) {
        const message = err instanceof TemplateTooLongError ? `the prompt or greeting ${err.message} with this call's values` : 'the call could not be prepared';
        await fail('error', { source: 'setup', statusCode: null, message });
        throw err;
      }
      if (!setup) {
        // Deleted between start and connect (a delete racing the start): the call fails at once.
        await fail('error', { source: 'setup', statusCode: null, message: 'the assistant or agent was deleted' });
        throw notFound('The assistant or agent of this call');
      }
      const providers = setup.voice?.kind === 'pipeline' ? { tts: setup.voice.tts.provider, stt: setup.voice.stt.provider }
        : setup.voice?.kind === 'realtime' ? { realtime: 'openai' } : null;
      if (setup.unfilled.length || providers) {
        await ctx.db.kysely.updateTable('calls')
          .set({ unfilled_placeholders: setup.unfilled.length ? JSON.stringify(setup.unfilled) : null, providers: providers ? JSON.stringify(providers) : null })
          .where('id', '=', callId).execute();
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
      llm: runtime.llm, send: runtime.send, clock: ctx.clock, log: request.log, limits: runtime.limits, recorder: callRecorder(deps, setup.callId),
    });
    runtime.track(session);
    const { transport, link } = websocketTransport(socket, {
      frame: (frame) => (frame.type === 'end' ? void session.end('client_ended') : session.userMessage(frame.text)),
      closed: () => void session.end('client_disconnected'),
    }, setup.voice?.audio);
    session.start(transport, setup.voice?.audio);
    if (setup.voice && link) {
      // The providers open while the call has started: the greeting waits for them, a failure ends the call saying why.
      openVoice(voice, setup.voice, link, session.voiceHost(), AbortSignal.timeout(15_000))
        .then((v) => session.attachVoice(v))
        .catch((err: unknown) => session.fail(err instanceof VoiceOpenError ? err.failure : { source: 'voice', statusCode: null, message: 'the voice could not be opened' }));
    }
  });
};
