// Glue between SDP and RTP for one call: an RTP session with the offer or answer that
// describes it, and a dialog's re-offers applied to it. The SIP layer itself only moves
// SDP text; these helpers are what a caller of placeCall / onInvite would otherwise write.
import type { Dialog } from './dialog.ts';
import { buildAnswer, buildOffer, negotiateOffer, readAnswer } from './sdp.ts';
import type { CodecName, NegotiatedMedia } from './sdp.ts';
import { RtpSession } from './rtp/session.ts';
import type { RtpSessionOptions } from './rtp/session.ts';

export interface MediaSettings extends RtpSessionOptions {
  /** The address written into SDP (PARLEY_MEDIA_ADDRESS). */
  mediaAddress: string;
  codecs?: CodecName[];
}

const sessionId = (): number => Math.floor(Math.random() * 2 ** 31);

/** UAC: an RTP session and our offer for it. Apply the answer with `session.setRemote(readAnswer(sdp))`. */
export async function offerMedia(settings: MediaSettings): Promise<{ session: RtpSession; sdp: string }> {
  const session = await RtpSession.open(settings);
  const sdp = buildOffer({ address: settings.mediaAddress, port: session.localPort, sessionId: sessionId(), sessionVersion: 1 }, settings.codecs);
  return { session, sdp };
}

/**
 * Reads the far end's answer (from a 183 or the 2xx) into the session. Throws SdpNegotiationError.
 * `signalAddress`: where the answer came from (OutboundResult's), which RTP latching may learn.
 */
export function applyAnswer(session: RtpSession, sdp: string, codecs?: CodecName[], signalAddress?: string): NegotiatedMedia {
  const negotiated = readAnswer(sdp, codecs);
  session.setRemote(signalAddress === undefined ? negotiated : { ...negotiated, signalAddress });
  return negotiated;
}

/**
 * UAS: negotiates the offer first (SdpNegotiationError means: reject with 488, no port is
 * taken), then an RTP session and our answer. `signalAddress`: where the INVITE came from.
 */
export async function answerMedia(offer: string, settings: MediaSettings, signalAddress?: string): Promise<{ session: RtpSession; sdp: string; negotiated: NegotiatedMedia }> {
  const negotiated = negotiateOffer(offer, settings.codecs);
  const session = await RtpSession.open(settings);
  const sdp = buildAnswer(offer, negotiated, { address: settings.mediaAddress, port: session.localPort, sessionId: sessionId(), sessionVersion: 1 });
  session.setRemote(signalAddress === undefined ? negotiated : { ...negotiated, signalAddress });
  return { session, sdp, negotiated };
}

/**
 * Follows the dialog: re-offers move or hold the media, the end of the call closes it, and
 * media gone silent for the session's `inactivityMs` hangs the call up.
 */
export function bindMedia(dialog: Dialog, session: RtpSession): void {
  session.once('inactive', () => void dialog.bye());
  dialog.on('sdp', ({ negotiated, remoteSdp }) => {
    try {
      session.setRemote(negotiated ?? readAnswer(remoteSdp));
    } catch {
      // An answer we cannot use in an ACK leaves the media as it was.
    }
  });
  void dialog.ended.then(() => session.close());
}
