import type { CallEngine } from '../calls/engine.ts';
import { sipTransportInfo } from '../calls/transports/transport.ts';
import { sipAudioFormat } from '../calls/transports/sip.ts';
import type { Config } from '../config.ts';
import type { Context } from '../context.ts';
import { applyAnswer, offerMedia } from '../sip/call-media.ts';
import { placeCall } from '../sip/outbound.ts';
import type { Dialer, DialOutcome } from './dialer.ts';
import type { TelephonyDirectory } from './directory.ts';
import { FarEndTap } from './answering/tap.ts';
import { runSipCall } from './sip-call.ts';
import { unansweredOutcome } from './sip-outcome.ts';
import type { Telephony } from './telephony.ts';

/** What placing task calls needs: the call engine, the numbers' directory, the ring time, the process's logger. */
export interface DialerDeps {
  engine: CallEngine;
  directory: TelephonyDirectory;
  config: Pick<Config, 'ringMs'>;
  log: Context['log'];
}

/**
 * PARLEY_DIALER=sip: each attempt is an INVITE to the task's number through the agent's number's
 * trunk (From = that number, digest on a challenge, CANCEL on abort or after PARLEY_RING_SECONDS).
 * Answered, it becomes a call record (transport sip, the task's id) run with the agent's voice on
 * RTP until either side hangs up; the task is completed with the call's conclusion.
 */
export function sipDialer(telephony: Telephony, deps: DialerDeps): Dialer {
  const { engine, config } = deps;
  return {
    name: 'sip',
    async dial(request): Promise<DialOutcome> {
      const route = await deps.directory.dialRoute(request.organizationId, request.agentId);
      if (!route) return { status: 'failed', error: 'the agent has no telephone number with SIP credentials', retryable: false };
      const log = deps.log.child({ taskId: request.taskId, attempt: request.attempt });
      const { session: rtp, sdp } = await offerMedia(telephony.media());
      let kept = false;
      try {
        const result = await placeCall(telephony.endpoint, {
          trunk: route.trunk, target: request.targetNumber, from: route.number, sdpOffer: sdp, ringTimeoutMs: config.ringMs, signal: request.signal,
          // Early media (183 with SDP): the far end's audio flows before the answer.
          onProgress: (progress) => {
            if (progress.sdp) try { applyAnswer(rtp, progress.sdp, undefined, progress.signalAddress); } catch { /* an unusable early answer waits for the 2xx */ }
          },
        });
        if (result.outcome !== 'answered') return unansweredOutcome(result);
        let codec;
        try {
          codec = applyAnswer(rtp, result.remoteSdp, undefined, result.signalAddress).codec;
        } catch {
          await result.dialog.bye();
          return { status: 'failed', error: 'the far end answered with media we cannot use', retryable: false, sipCode: 200 };
        }
        // From the answer on, the far end's first words are kept for voicemail detection (the agent's setup is read next).
        const farEnd = new FarEndTap(rtp, codec);
        let call;
        try {
          call = await engine.store.insertLive({
            kind: 'agent', organizationId: request.organizationId, sourceId: request.agentId, userValues: request.userValues,
            traceId: crypto.randomUUID(), transport: sipTransportInfo(request.targetNumber, route.number), taskId: request.taskId,
            audio: sipAudioFormat(codec), sipCredentialId: route.credentialId,
          });
        } catch (err) {
          farEnd.stop();
          await result.dialog.bye();
          return { status: 'failed', error: err instanceof Error ? err.message : 'the call could not be recorded', retryable: true, sipCode: 200 };
        }
        kept = true;
        log.info({ callId: call.id }, 'task call answered');
        const bridge = { endpoint: telephony.endpoint, trunk: route.trunk, from: route.number, media: telephony.media(), ringTimeoutMs: config.ringMs, log };
        const { conclusionId, answering } = await runSipCall(engine, { call, dialog: result.dialog, rtp, codec, log, signal: request.signal, bridge, farEnd });
        return { ...(answering?.taskOutcome ?? { status: 'completed' }), conclusionId, callId: call.id, sipCode: 200 };
      } finally {
        if (!kept) rtp.close();
      }
    },
  };
}
