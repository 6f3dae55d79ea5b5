import type { FastifyRequest } from 'fastify';
import type { CallSetup } from '../../calls/record.ts';
import type { CallSession } from '../../calls/session.ts';
import type { TransportInfo } from '../../calls/transports/transport.ts';
import type { AudioLink } from '../../calls/voice/link.ts';
import type { VoicePlan } from '../../calls/voice/plan.ts';
import { readJson } from '../../db/values.ts';
import { badRequest, notFound, unauthorized } from '../../http/errors.ts';
import { failCall, newSession, openCallVoice, prepareCall, type CallRunDeps } from './call-run.ts';
import { connectCall } from './calls.service.ts';

export type CallSocketOptions = CallRunDeps;

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
export function callConnector(run: CallSocketOptions) {
  const { deps } = run;
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
      const setup = await prepareCall(run, row);
      // Deleted between start and connect (a delete racing the start): the call has failed already.
      if (!setup) throw notFound('The assistant or agent of this call');
      const entry = { setup, transport: readJson<TransportInfo>(row.transport), started: false };
      prepared.set(request, entry);
      // A client gone before the upgrade completes never reaches the handler.
      if (request.raw.socket.destroyed) return void (await failCall(deps, callId, 'client_disconnected'));
      request.raw.socket.once('close', () => {
        if (!entry.started) void failCall(deps, callId, 'client_disconnected').catch((err: unknown) => request.log.error({ err, callId }, 'could not end an abandoned call'));
      });
    },

    /** In the upgrade handler: the prepared call and its new session (not started yet); null when the request was not prepared. */
    connect(request: FastifyRequest): ConnectedCall | null {
      const entry = prepared.get(request);
      if (!entry) return null;
      entry.started = true;
      const { setup, transport } = entry;
      const session = newSession(run, setup, request.log);
      return { setup, transport, session };
    },

    /** Opens a started call's voice: the greeting waits for it, and a provider that fails ends the call saying why. */
    openVoice(setup: CallSetup & { voice: VoicePlan }, link: AudioLink, session: CallSession, log: FastifyRequest['log']): void {
      openCallVoice(run, setup, link, session, log);
    },
  };
}

export type CallConnector = ReturnType<typeof callConnector>;
