import { sql, type Selectable } from 'kysely';
import { sipAudioFormat } from '../../calls/transports/sip.ts';
import { sipTransportInfo } from '../../calls/transports/transport.ts';
import { withClaimLock } from '../../db/claim-lock.ts';
import { answerMedia } from '../../sip/call-media.ts';
import type { InviteHandler } from '../../sip/endpoint.ts';
import type { IncomingCall } from '../../sip/inbound.ts';
import type { RtpSession } from '../../sip/rtp/session.ts';
import { SdpNegotiationError, type CodecName } from '../../sip/sdp.ts';
import { failCall, prepareCall, type CallRunDeps } from '../calls/call-run.ts';
import type { CallTable } from '../calls/calls.table.ts';
import { insertLiveCall } from '../calls/calls.service.ts';
import { CREDENTIAL_LOCK, credentialLoad } from '../sip/credential-load.ts';
import { callingNumber } from '../twilio/inbound.ts';
import { routeInbound, type InboundRoute } from './inbound-route.ts';
import { runSipCall } from './sip-call.ts';
import type { Telephony } from './telephony.ts';

type Admitted = { row: Selectable<CallTable> } | { refuse: 486 };

/**
 * The call record of an admitted call, made under the credentials' lock: their load (running
 * agent tasks and live calls, the same count the task claim compares) must be under their
 * `maxAgentTasks`, and the organization under its call cap. Either full is a 486.
 */
async function admit(run: CallRunDeps, route: InboundRoute, call: IncomingCall, codec: CodecName): Promise<Admitted> {
  const { ctx } = run.deps;
  return withClaimLock(ctx.db, CREDENTIAL_LOCK, async (trx) => {
    const { rows } = await sql<{ load: number }>`select ${credentialLoad(sql.val(route.credentialId))} as load`.execute(trx);
    if (Number(rows[0]?.load ?? 0) >= route.maxCalls) return { refuse: 486 } as const;
    try {
      const row = await insertLiveCall(trx, run.deps, {
        kind: route.answerer.kind, organizationId: route.organizationId, sourceId: route.answerer.id, userValues: {},
        traceId: crypto.randomUUID(), transport: sipTransportInfo(route.number, call.anonymous ? null : callingNumber(call.from.user ?? undefined)),
        audio: sipAudioFormat(codec), sipCredentialId: route.credentialId,
      });
      return { row };
    } catch (err) {
      // The organization at PARLEY_MAX_CALLS_PER_ORGANIZATION (409 on the API) is busy here too.
      if ((err as { statusCode?: number }).statusCode === 409) return { refuse: 486 } as const;
      throw err;
    }
  });
}

/**
 * Takes one INVITE: routed to its SIP number (404 when there is none, it came from another
 * host than the number's trunk, or nobody answers the number), media negotiated (488 without
 * a common codec), admitted under the credentials' cap (486), answered, and run with the
 * number's assistant or agent until either side hangs up.
 */
async function take(telephony: Telephony, run: CallRunDeps, call: IncomingCall): Promise<void> {
  const log = run.deps.ctx.log.child({ sipCallId: call.callId });
  const route = await routeInbound(run.deps.ctx.db.kysely, call, telephony.endpoint.policy.resolver);
  if (typeof route === 'string') {
    log.info({ to: call.to.user, source: call.source.address, why: route }, 'incoming SIP call refused: 404');
    return call.reject(404);
  }
  let media: { session: RtpSession; sdp: string; codec: CodecName };
  try {
    const answered = await answerMedia(call.sdp, telephony.media());
    media = { session: answered.session, sdp: answered.sdp, codec: answered.negotiated.codec };
  } catch (err) {
    if (err instanceof SdpNegotiationError) return call.reject(err.status);
    throw err;
  }
  let row: Selectable<CallTable>;
  try {
    const admitted = await admit(run, route, call, media.codec);
    if ('refuse' in admitted) {
      log.info({ credentialId: route.credentialId }, 'incoming SIP call refused: the credentials or the organization are at their cap');
      media.session.close();
      return call.reject(admitted.refuse);
    }
    row = admitted.row;
  } catch (err) {
    media.session.close();
    throw err;
  }
  // Prepared before the answer, so the session starts with the dialog: the greeting goes out at
  // once and a key pressed right after the answer is not lost.
  const setup = await prepareCall(run, row).catch(() => null);
  if (!setup) {
    // prepareCall ended the record as failed, saying why.
    media.session.close();
    return call.reject(480);
  }
  let dialog;
  try {
    dialog = call.answer(media.sdp);
  } catch {
    // The caller gave up (CANCEL) while the call was being prepared.
    media.session.close();
    return failCall(run.deps, row.id, 'client_disconnected');
  }
  const callLog = log.child({ callId: row.id });
  callLog.info({ organizationId: route.organizationId, number: route.number }, 'incoming SIP call answered');
  await runSipCall(run, { row, dialog, rtp: media.session, codec: media.codec, log: callLog, setup });
}

/** The endpoint's INVITE handler: every incoming call taken as `take` says; an error is a 500. */
export function inboundCalls(telephony: Telephony, run: CallRunDeps): InviteHandler {
  return (call) => {
    take(telephony, run, call).catch((err: unknown) => {
      run.deps.ctx.log.error({ err, sipCallId: call.callId }, 'incoming SIP call failed');
      call.reject(500);
    });
  };
}
