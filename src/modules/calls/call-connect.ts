import type { FastifyRequest } from 'fastify';
import type { CallFailure, CallSetup } from '../../calls/record.ts';
import type { CallRuntime } from '../../calls/runtime.ts';
import { CallSession } from '../../calls/session.ts';
import { TemplateTooLongError } from '../../calls/template.ts';
import type { TransportInfo } from '../../calls/transports/transport.ts';
import { openVoice, VoiceOpenError } from '../../calls/voice/attach.ts';
import type { VoiceKit } from '../../calls/voice/kit.ts';
import type { AudioLink } from '../../calls/voice/link.ts';
import type { VoicePlan } from '../../calls/voice/plan.ts';
import { readJson } from '../../db/values.ts';
import { badRequest, notFound, unauthorized } from '../../http/errors.ts';
import { loadCallSetup } from './call-setup.ts';
import { callRecorder, connectCall, type CallDeps } from './calls.service.ts';
import type { ResolveAccess } from './voice-plan.ts';

export interface CallSocketOptions {
  deps: CallDeps;
  runtime: CallRuntime;
  voice: VoiceKit;
  resolveAccess: ResolveAccess;
}

/** A connected call, ready for its session. */
export interface ConnectedCall {
  setup: CallSetup;
  /** How the call was connected, as it was started (tool webhooks send it). */
  transport: TransportInfo;
  session: CallSession;
}

/**
 * What every call socket shares, whatever protocol it speaks (the call WebSocket, Twilio Media
 * Streams): the single-use token used before the upgrade, the call's setup loaded, and after
 * the upgrade its session, tracked by the runtime, and its voice opened.
 */
export function callConnector({ deps, runtime, voice, resolveAccess }: CallSocketOptions) {
  const { ctx } = deps;
  const prepared = new WeakMap<object, { setup: CallSetup; transport: TransportInfo; started: boolean }>();

  return {
    /**
     * For a preHandler: uses the token (a wrong, used or expired one is a 401 and nothing
     * happens), then loads what the call runs with. From the token's use on the call is active,
     * so every way out ends it with a record.
     */
    async prepare(request: FastifyRequest, callId: string, token: string): Promise<void> {
      // A plain GET would otherwise use up the token and get an empty 404 from the WebSocket plugin.
      if (!request.ws) throw badRequest('This endpoint speaks WebSocket only', [{ path: '(headers)', message: 'must ask to upgrade to a WebSocket (Connection: Upgrade, Upgrade: websocket)' }]);
      const row = await connectCall(deps, callId, token);
      if (!row) throw unauthorized('The call token is wrong, used or expired');
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
      const entry = { setup, transport: readJson<TransportInfo>(row.transport), started: false };
      prepared.set(request, entry);
      // A client gone before the upgrade completes never reaches the handler.
      if (request.raw.socket.destroyed) return void (await fail('client_disconnected'));
      request.raw.socket.once('close', () => {
        if (!entry.started) void fail('client_disconnected').catch((err: unknown) => request.log.error({ err, callId }, 'could not end an abandoned call'));
      });
    },

    /** In the upgrade handler: the prepared call and its new session (not started yet); null when the request was not prepared. */
    connect(request: FastifyRequest): ConnectedCall | null {
      const entry = prepared.get(request);
      if (!entry) return null;
      entry.started = true;
      const { setup, transport } = entry;
      const session = new CallSession(setup, {
        llm: runtime.llm, send: runtime.send, clock: ctx.clock, log: request.log, limits: runtime.limits, recorder: callRecorder(deps, setup.callId),
        timers: voice.clock,
      });
      runtime.track(session);
      return { setup, transport, session };
    },

    /** Opens a started call's voice: the greeting waits for it, and a provider that fails ends the call saying why. */
    openVoice(setup: CallSetup & { voice: VoicePlan }, link: AudioLink, session: CallSession, log: FastifyRequest['log']): void {
      openVoice(voice, {
        plan: setup.voice, link, host: session.voiceHost(), signal: AbortSignal.timeout(15_000),
        instructions: setup.systemPrompt, tools: setup.tools, controls: session.offeredControls(), log,
      })
        .then((v) => session.attachVoice(v))
        .catch((err: unknown) => session.fail(err instanceof VoiceOpenError ? err.failure : { source: 'voice', statusCode: null, message: 'the voice could not be opened' }));
    },
  };
}

export type CallConnector = ReturnType<typeof callConnector>;
