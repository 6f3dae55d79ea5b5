import type { FastifyRequest } from 'fastify';
import { badRequest, notFound, unauthorized } from '../http/errors.ts';
import { newSession, openCallVoice, prepareCall, type CallEngine } from './engine.ts';
import type { CallSetup } from './record.ts';
import type { CallSession } from './session.ts';
import type { TransportInfo } from './transports/transport.ts';
import type { AudioLink } from './voice/link.ts';
import type { VoicePlan } from './voice/plan.ts';

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
export function callConnector(engine: CallEngine) {
  const { store } = engine;
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
      const call = await store.connect(callId, token);
      if (!call) throw unauthorized('The call token is wrong, used or expired');
      const setup = await prepareCall(engine, call);
      // Deleted between start and connect (a delete racing the start): the call has failed already.
      if (!setup) throw notFound('The assistant or agent of this call');
      const entry = { setup, transport: call.transport, started: false };
      prepared.set(request, entry);
      // A client gone before the upgrade completes never reaches the handler.
      if (request.raw.socket.destroyed) return void (await store.fail(callId, 'client_disconnected'));
      request.raw.socket.once('close', () => {
        if (!entry.started) void store.fail(callId, 'client_disconnected').catch((err: unknown) => request.log.error({ err, callId }, 'could not end an abandoned call'));
      });
    },

    /** In the upgrade handler: the prepared call and its new session (not started yet); null when the request was not prepared. */
    connect(request: FastifyRequest): ConnectedCall | null {
      const entry = prepared.get(request);
      if (!entry) return null;
      entry.started = true;
      const { setup, transport } = entry;
      const session = newSession(engine, setup, request.log);
      return { setup, transport, session };
    },

    /** Opens a started call's voice: the greeting waits for it, and a provider that fails ends the call saying why. */
    openVoice(setup: CallSetup & { voice: VoicePlan }, link: AudioLink, session: CallSession, log: FastifyRequest['log']): void {
      openCallVoice(engine, setup, link, session, log);
    },
  };
}

export type CallConnector = ReturnType<typeof callConnector>;
