import type { Log } from '../calls/record.ts';
import type { TransferResult } from '../calls/transports/sip.ts';
import { applyAnswer, bindMedia, offerMedia, type MediaSettings } from '../sip/call-media.ts';
import type { Dialog } from '../sip/dialog.ts';
import type { SipEndpoint } from '../sip/endpoint.ts';
import { placeCall, type OutboundResult } from '../sip/outbound.ts';
import type { RtpSession } from '../sip/rtp/session.ts';
import type { CodecName } from '../sip/sdp.ts';
import type { Trunk } from '../sip/target.ts';

/** Where the bridge's second leg goes out: the first leg's trunk and caller id. */
export interface BridgeRoute {
  endpoint: SipEndpoint;
  trunk: Trunk;
  /** From of the new INVITE: the number the first leg uses. */
  from: string;
  media: MediaSettings;
  ringTimeoutMs: number;
  log: Log;
}

function unanswered(result: Exclude<OutboundResult, { outcome: 'answered' }>): string {
  if (result.outcome === 'rejected') return `SIP ${result.status} ${result.reason}`;
  if (result.outcome === 'cancelled') return result.by === 'ring-timeout' ? 'no answer' : 'the call ended meanwhile';
  return `${result.reason}: ${result.message}`;
}

/**
 * The fallback of a refused transfer: a new INVITE to the destination through the same trunk,
 * and RTP relayed between the legs both ways (the first leg's codec only, so nothing is
 * transcoded), keys too. A BYE on either leg ends the other. `done` resolves once both legs
 * have ended (null until a bridge was made): the call's media and port live until then.
 */
export class SipBridge {
  #done: Promise<void> | null = null;

  constructor(
    private readonly route: BridgeRoute,
    private readonly legA: { dialog: Dialog; rtp: RtpSession; codec: CodecName },
  ) {}

  get done(): Promise<void> | null {
    return this.#done;
  }

  async connect(destination: string): Promise<TransferResult> {
    const { route, legA } = this;
    if (this.#done) return { ok: false, reason: 'the call is already bridged' };
    const { session: rtpB, sdp } = await offerMedia({ ...route.media, codecs: [legA.codec] });
    // The first leg hanging up while the second one rings gives up on it (CANCEL).
    const gone = new AbortController();
    void legA.dialog.ended.then(() => gone.abort());
    const result = await placeCall(route.endpoint, { trunk: route.trunk, target: destination, from: route.from, sdpOffer: sdp, ringTimeoutMs: route.ringTimeoutMs, signal: gone.signal });
    if (result.outcome !== 'answered') {
      rtpB.close();
      return { ok: false, reason: unanswered(result) };
    }
    try {
      applyAnswer(rtpB, result.remoteSdp, [legA.codec], result.signalAddress);
    } catch {
      rtpB.close();
      await result.dialog.bye();
      return { ok: false, reason: `${destination} answered with media other than ${legA.codec}` };
    }
    const legB = { dialog: result.dialog, rtp: rtpB };
    bindMedia(legB.dialog, legB.rtp);
    legA.rtp.on('audio', (frame) => void legB.rtp.send(frame.payload));
    legB.rtp.on('audio', (frame) => void legA.rtp.send(frame.payload));
    legA.rtp.on('dtmf', ({ digit }) => void legB.rtp.sendDtmf(digit).catch(() => undefined));
    legB.rtp.on('dtmf', ({ digit }) => void legA.rtp.sendDtmf(digit).catch(() => undefined));
    void legA.dialog.ended.then(() => legB.dialog.bye());
    void legB.dialog.ended.then(() => legA.dialog.bye());
    this.#done = Promise.all([legA.dialog.ended, legB.dialog.ended]).then(() => {
      rtpB.close();
      route.log.info({ destination }, 'bridged transfer ended');
    });
    route.log.info({ destination, callId: result.dialog.callId }, 'transfer bridged: the trunk refused REFER');
    return { ok: true };
  }
}
