import { sipTransportInfo } from '../../calls/transports/transport.ts';
import { sipAudioFormat } from '../../calls/transports/sip.ts';
import type { Config } from '../../config.ts';
import { applyAnswer, offerMedia } from '../../sip/call-media.ts';
import { placeCall } from '../../sip/outbound.ts';
import type { SipTransport } from '../../sip/resolve.ts';
import type { CallRunDeps } from '../calls/call-run.ts';
import { insertLiveCall } from '../calls/calls.service.ts';
import type { Dialer, DialOutcome, DialRequest } from '../tasks/dialer.ts';
import { runSipCall } from './sip-call.ts';
import { unansweredOutcome } from './sip-outcome.ts';
import type { Telephony } from './telephony.ts';

/** The agent's number and the trunk it calls through, password opened. */
async function routeOf(run: CallRunDeps, request: DialRequest) {
  const { ctx } = run.deps;
  const row = await ctx.db.kysely.selectFrom('assistants as a')
    .innerJoin('sip_numbers as n', 'n.id', 'a.telephone_number_id')
    .innerJoin('sip_credentials as cr', 'cr.id', 'n.sip_credential_id')
    .select(['n.number', 'cr.id as credentialId', 'cr.hostname', 'cr.port', 'cr.transport', 'cr.username', 'cr.password_sealed'])
    .where('a.id', '=', request.agentId).where('a.organization_id', '=', request.organizationId)
    .executeTakeFirst();
  if (!row) return null;
  const trunk = { hostname: row.hostname, port: row.port, transport: row.transport as SipTransport, username: row.username, password: ctx.secrets.open(row.password_sealed) };
  return { number: row.number, credentialId: row.credentialId, trunk };
}

/**
 * PARLEY_DIALER=sip: each attempt is an INVITE to the task's number through the agent's number's
 * trunk (From = that number, digest on a challenge, CANCEL on abort or after PARLEY_RING_SECONDS).
 * Answered, it becomes a call record (transport sip, the task's id) run with the agent's voice on
 * RTP until either side hangs up; the task is completed with the call's conclusion.
 */
export function sipDialer(telephony: Telephony, run: CallRunDeps, config: Pick<Config, 'ringMs'>): Dialer {
  return {
    name: 'sip',
    async dial(request): Promise<DialOutcome> {
      const route = await routeOf(run, request);
      if (!route) return { status: 'failed', error: 'the agent has no telephone number with SIP credentials', retryable: false };
      const log = run.deps.ctx.log.child({ taskId: request.taskId, attempt: request.attempt });
      const { session: rtp, sdp } = await offerMedia(telephony.media());
      let kept = false;
      try {
        const result = await placeCall(telephony.endpoint, {
          trunk: route.trunk, target: request.targetNumber, from: route.number, sdpOffer: sdp, ringTimeoutMs: config.ringMs, signal: request.signal,
          // Early media (183 with SDP): the far end's audio flows before the answer.
          onProgress: (progress) => {
            if (progress.sdp) try { applyAnswer(rtp, progress.sdp); } catch { /* an unusable early answer waits for the 2xx */ }
          },
        });
        if (result.outcome !== 'answered') return unansweredOutcome(result);
        let codec;
        try {
          codec = applyAnswer(rtp, result.remoteSdp).codec;
        } catch {
          await result.dialog.bye().catch(() => undefined);
          return { status: 'failed', error: 'the far end answered with media we cannot use', retryable: false, sipCode: 200 };
        }
        let row;
        try {
          row = await run.deps.ctx.db.kysely.transaction().execute((trx) => insertLiveCall(trx, run.deps, {
            kind: 'agent', organizationId: request.organizationId, sourceId: request.agentId, userValues: request.userValues,
            traceId: crypto.randomUUID(), transport: sipTransportInfo(request.targetNumber, route.number), taskId: request.taskId,
            audio: sipAudioFormat(codec), sipCredentialId: route.credentialId,
          }));
        } catch (err) {
          await result.dialog.bye().catch(() => undefined);
          return { status: 'failed', error: err instanceof Error ? err.message : 'the call could not be recorded', retryable: true, sipCode: 200 };
        }
        kept = true;
        log.info({ callId: row.id }, 'task call answered');
        const bridge = { endpoint: telephony.endpoint, trunk: route.trunk, from: route.number, media: telephony.media(), ringTimeoutMs: config.ringMs, log };
        const { conclusionId } = await runSipCall(run, { row, dialog: result.dialog, rtp, codec, log, signal: request.signal, bridge });
        return { status: 'completed', conclusionId, callId: row.id, sipCode: 200 };
      } finally {
        if (!kept) rtp.close();
      }
    },
  };
}
