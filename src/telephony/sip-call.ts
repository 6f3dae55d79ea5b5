import { newSession, prepareCall, startSession, type CallEngine } from '../calls/engine.ts';
import type { CallSetup, Log } from '../calls/record.ts';
import type { CallMedia, LiveCall } from '../calls/store.ts';
import { sipTransport } from '../calls/transports/sip.ts';
import { bindMedia } from '../sip/call-media.ts';
import type { Dialog } from '../sip/dialog.ts';
import type { RtpSession, RtpStats } from '../sip/rtp/session.ts';
import type { CodecName } from '../sip/sdp.ts';
import { answeringFor } from './answering/answering.ts';
import type { AnsweringDetection } from './answering/detection.ts';
import type { FarEndTap } from './answering/tap.ts';
import { SipBridge, type BridgeRoute } from './sip-bridge.ts';

export function callMediaOf(stats: RtpStats): CallMedia {
  const { remote } = stats;
  return {
    packetsSent: stats.packetsSent,
    packetsReceived: stats.packetsReceived,
    packetsLost: stats.packetsLost,
    jitterMs: Math.round(stats.jitterMs * 100) / 100,
    remote: remote ? { packetsLost: remote.packetsLost, fractionLost: remote.fractionLost, jitterMs: Math.round(remote.jitterMs * 100) / 100, rttMs: remote.rttMs } : null,
  };
}

export interface ConnectedSipCall {
  /** The call, just made active. */
  call: LiveCall;
  dialog: Dialog;
  rtp: RtpSession;
  codec: CodecName;
  log: Log;
  /** Aborted when the call must end from our side (its task cancelled, its lease lost). */
  signal?: AbortSignal;
  /** Where a transfer the trunk refuses is placed and bridged by us; without it such a transfer fails. */
  bridge?: BridgeRoute;
  /**
   * The call's setup when it was prepared before the answer (an incoming call, prepared while it
   * rang): the session then starts with the dialog, so no early key or word is missed.
   */
  setup?: CallSetup;
  /** A placed call: the far end's audio since the answer, for the agent's voicemail detection. */
  farEnd?: FarEndTap;
}

/**
 * Runs an answered SIP call (placed by the dialer or taken in) to its end: the session with the
 * voice pipeline over RTP, the far end's BYE ending it, our BYE when the session ends first
 * (unless a refused transfer was bridged by us: then it ends when one of the bridged legs does).
 * A placed call whose agent has voicemail_detection first finds out who answered (the greeting
 * waits for it). Keeps the media statistics on the record; answers the conclusion's id (null
 * when the call could not be prepared and was ended as failed) and the detection, if one ran.
 */
export async function runSipCall(engine: CallEngine, call: ConnectedSipCall): Promise<{ conclusionId: string | null; answering: AnsweringDetection | null }> {
  const { dialog, rtp } = call;
  bindMedia(dialog, rtp);
  let answering: AnsweringDetection | null = null;
  try {
    const setup = call.setup ?? await prepareCall(engine, call.call).catch(() => null);
    if (!setup) {
      call.farEnd?.stop();
      await dialog.bye(); // never rejects: a failed BYE is logged and counted by the dialog
    } else {
      const session = newSession(engine, setup, call.log);
      answering = call.farEnd ? answeringFor(engine, setup, call.farEnd, session.lifetime, call.log) : null;
      const bridge = call.bridge ? new SipBridge(call.bridge, { dialog, rtp, codec: call.codec }) : null;
      const { transport, link } = sipTransport(dialog, rtp, call.call.transport, call.codec, {
        ended: (end) => void session.end(end.by === 'remote' ? 'client_ended' : 'client_disconnected'),
        dtmf: (digit) => session.dtmf(digit),
        ...(bridge ? { bridge: (destination: string) => bridge.connect(destination) } : {}),
      });
      startSession(engine, session, setup, transport, link, call.log, answering?.opener, answering?.gate);
      const stop = (): void => {
        void session.end('server_lost');
        // A bridged call is no longer the session's: hanging up the caller's leg ends the other.
        if (bridge?.done) void dialog.bye();
      };
      call.signal?.addEventListener('abort', stop, { once: true });
      if (call.signal?.aborted) stop();
      await session.done;
      await answering?.done;
      // Transferred by a bridge: the media (and the port) live until both legs hung up.
      if (bridge?.done) await bridge.done;
    }
  } finally {
    rtp.close();
  }
  return { conclusionId: await engine.store.saveMedia(call.call.id, callMediaOf(rtp.stats())), answering };
}
