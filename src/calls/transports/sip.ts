import { setTimeout as sleep } from 'node:timers/promises';
import type { Dialog, DialogEnd } from '../../sip/dialog.ts';
import type { RtpSession } from '../../sip/rtp/session.ts';
import type { CodecName } from '../../sip/sdp.ts';
import type { AudioFormat } from '../../voice/audio/format.ts';
import type { AudioLink } from '../voice/link.ts';
import type { CallControl, CallTransport, TransportInfo } from './transport.ts';

/** `,` and `w` in a DTMF string: a pause, as phones dial them. */
export const DTMF_PAUSE_MS = 500;
const DTMF_KEYS = /^[0-9*#A-D,w]*$/i;

export interface SipCallHandlers {
  /** The far end hung up, or the dialog ended for any other reason than our close(). */
  ended(end: DialogEnd): void;
  /** A key the caller pressed (RFC 4733 in RTP, or SIP INFO). */
  dtmf(digit: string): void;
}

/** The audio of a negotiated G.711 codec, as the voice pipeline names it. */
export function sipAudioFormat(codec: CodecName): AudioFormat {
  return { encoding: codec === 'PCMA' ? 'alaw' : 'mulaw', sampleRate: 8000 };
}

/**
 * A call over SIP: the dialog carries signalling, the RTP session the voice (20 ms G.711 frames
 * both ways, lead 0: a phone plays what arrives). JSON frames have no peer on a phone and go
 * nowhere. `control` is the CallControl seam of the call engine: transfer by REFER (blind),
 * DTMF out as RFC 4733 events; keys pressed by the caller go to `handlers.dtmf`.
 *
 * Transfer does not yet fall back to a bridged INVITE when the trunk refuses REFER: it answers
 * `{ ok: false }` with the trunk's status, and the bridge belongs here when it comes.
 */
export function sipTransport(dialog: Dialog, rtp: RtpSession, info: TransportInfo, codec: CodecName, handlers: SipCallHandlers): { transport: CallTransport; link: AudioLink } {
  let closing = false;
  const control: CallControl = {
    async transfer(destination) {
      const target = destination.startsWith('+') ? `tel:${destination}` : destination;
      try {
        const result = await dialog.refer(target);
        return result.accepted ? { ok: true } : { ok: false, reason: `the trunk refused the transfer (SIP ${result.status} ${result.reason})` };
      } catch (err) {
        return { ok: false, reason: err instanceof Error ? err.message : 'the transfer failed' };
      }
    },
    async sendDtmf(digits) {
      if (!DTMF_KEYS.test(digits)) throw new TypeError(`DTMF digits are 0-9, *, #, A-D, and , or w for a pause; got ${JSON.stringify(digits.slice(0, 40))}`);
      for (const key of digits) {
        if (key === ',' || key.toLowerCase() === 'w') await sleep(DTMF_PAUSE_MS);
        else await rtp.sendDtmf(key.toUpperCase());
      }
    },
  };
  const transport: CallTransport = {
    info,
    send: () => {},
    close() {
      if (closing) return;
      closing = true;
      void dialog.bye().catch(() => undefined);
    },
    control,
  };
  const link: AudioLink = {
    format: sipAudioFormat(codec),
    lead: 0,
    sendFrame: (frame) => void rtp.send(frame),
    flushPeer: () => {},
    onAudio: (listener) => void rtp.on('audio', (frame) => listener(frame.payload)),
  };
  rtp.on('dtmf', ({ digit }) => handlers.dtmf(digit));
  dialog.on('dtmf', ({ digit }) => handlers.dtmf(digit));
  void dialog.ended.then((end) => {
    if (!closing) handlers.ended(end);
  });
  return { transport, link };
}
