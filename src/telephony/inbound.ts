import type { CallEngine } from '../calls/engine.ts';
import { prepareCall } from '../calls/engine.ts';
import type { LiveCall } from '../calls/store.ts';
import { sipAudioFormat } from '../calls/transports/sip.ts';
import { sipTransportInfo } from '../calls/transports/transport.ts';
import type { Context } from '../context.ts';
import { answerMedia } from '../sip/call-media.ts';
import type { InviteHandler } from '../sip/endpoint.ts';
import type { IncomingCall } from '../sip/inbound.ts';
import type { RtpSession } from '../sip/rtp/session.ts';
import { SdpNegotiationError, type CodecName } from '../sip/sdp.ts';
import type { TelephonyDirectory } from './directory.ts';
import { routeInbound } from './inbound-route.ts';
import { callingNumber } from './numbers.ts';
import { runSipCall } from './sip-call.ts';
import type { Telephony } from './telephony.ts';

/** What taking incoming calls needs: the call engine, the numbers' directory, the process's logger. */
export interface InboundDeps {
  engine: CallEngine;
  directory: TelephonyDirectory;
  log: Context['log'];
}

/**
 * Takes one INVITE: routed to its SIP number (404 when there is none, it came from another
 * host than the number's trunk, or nobody answers the number), media negotiated (488 without
 * a common codec), admitted under the credentials' cap and the organization's (486), answered,
 * and run with the number's assistant or agent until either side hangs up.
 */
async function take(telephony: Telephony, deps: InboundDeps, call: IncomingCall): Promise<void> {
  const { engine } = deps;
  const log = deps.log.child({ sipCallId: call.callId });
  const route = await routeInbound(deps.directory, call, telephony.endpoint.policy.resolver);
  if (typeof route === 'string') {
    // Two organizations claiming one number on one trunk is a misconfiguration or an attack: an operator must hear of it.
    log[route === 'ambiguous' ? 'warn' : 'info']({ to: call.to.user, source: call.source.address, why: route }, 'incoming SIP call refused: 404');
    return call.reject(404);
  }
  let media: { session: RtpSession; sdp: string; codec: CodecName };
  try {
    const answered = await answerMedia(call.sdp, telephony.media(), call.source.address);
    media = { session: answered.session, sdp: answered.sdp, codec: answered.negotiated.codec };
  } catch (err) {
    if (err instanceof SdpNegotiationError) return call.reject(err.status);
    throw err;
  }
  const caller = call.anonymous ? null : callingNumber(call.from.user ?? undefined);
  let live: LiveCall;
  try {
    const admitted = await engine.store.admit({
      kind: route.answerer.kind, organizationId: route.organizationId, sourceId: route.answerer.id, userValues: {},
      traceId: crypto.randomUUID(), transport: sipTransportInfo(route.number, caller?.number, caller?.raw),
      audio: sipAudioFormat(media.codec), sipCredentialId: route.credentialId,
    }, route.maxCalls);
    if (admitted === 'busy') {
      log.info({ credentialId: route.credentialId }, 'incoming SIP call refused: the credentials or the organization are at their cap');
      media.session.close();
      return call.reject(486);
    }
    live = admitted;
  } catch (err) {
    media.session.close();
    throw err;
  }
  // Prepared before the answer, so the session starts with the dialog: the greeting goes out at
  // once and a key pressed right after the answer is not lost.
  const setup = await prepareCall(engine, live).catch(() => null);
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
    return engine.store.fail(live.id, 'client_disconnected');
  }
  const callLog = log.child({ callId: live.id });
  callLog.info({ organizationId: route.organizationId, number: route.number }, 'incoming SIP call answered');
  await runSipCall(engine, { call: live, dialog, rtp: media.session, codec: media.codec, log: callLog, setup });
}

/** The endpoint's INVITE handler: every incoming call taken as `take` says; an error is a 500. */
export function inboundCalls(telephony: Telephony, deps: InboundDeps): InviteHandler {
  return (call) => {
    take(telephony, deps, call).catch((err: unknown) => {
      deps.log.error({ err, sipCallId: call.callId }, 'incoming SIP call failed');
      call.reject(500);
    });
  };
}
