import { setTimeout as sleep } from 'node:timers/promises';
import type { Dialog, DialogEnd } from '../../sip/dialog.ts';
import type { RtpSession } from '../../sip/rtp/session.ts';
import type { CodecName } from '../../sip/sdp.ts';
import type { AudioFormat } from '../../voice/audio/format.ts';
import type { AudioLink } from '../voice/link.ts';
import type { CallControl, CallTransport, TransportInfo } from './transport.ts';

/**
 * 20 ms frames handed to the RTP media thread ahead of their time. The media thread sends them
 * on its own steady 20 ms cadence, so the main thread may run up to this late (busy with other
 * calls) before the phone hears a gap. Barge-in flushes them, and the call's BYE waits until they
 * have gone out, so the lead costs no delay anywhere.
 */
export const SIP_AUDIO_LEAD = 20;
/** The longest the BYE waits for the frames handed over to go out: the lead, with room to spare. */
export const SIP_DRAIN_MS = 1_000;

/** `,` and `w` in a DTMF string: a pause, as phones dial them. */
export const DTMF_PAUSE_MS = 500;
const DTMF_KEYS = /^[0-9*#A-D,w]*$/i;

export interface SipCallHandlers {
  /** The far end hung up, or the dialog ended for any other reason than our close(). */
  ended(end: DialogEnd): void;
  /** A key the caller pressed (RFC 4733 in RTP, or SIP INFO). */
  dtmf(digit: string): void;
  /**
   * The fallback of a transfer the trunk refused (REFER answered 4xx-6xx, or a NOTIFY that
   * reports failure): call the destination ourselves and bridge the caller to it. Resolves once
   * the destination answered and the legs are bridged (the call then belongs to the bridge).
   */
  bridge?(destination: string): Promise<TransferResult>;
}

export type TransferResult = { ok: true } | { ok: false; reason: string };

/** Why a REFER did not move the caller, or null when it did (or the far end never said otherwise). */
async function referRefusal(dialog: Dialog, target: string): Promise<string | null> {
  const result = await dialog.refer(target);
  if (!result.accepted) return `SIP ${result.status} ${result.reason}`;
  // Accepted: the final NOTIFY tells whether the new call worked. No NOTIFY at all counts as done.
  const outcome = await result.outcome;
  return outcome && outcome.status >= 300 ? `the new call got SIP ${outcome.status} ${outcome.reason}` : null;
}

/** The audio of a negotiated G.711 codec, as the voice pipeline names it. */
export function sipAudioFormat(codec: CodecName): AudioFormat {
  return { encoding: codec === 'PCMA' ? 'alaw' : 'mulaw', sampleRate: 8000 };
}

/**
 * A call over SIP: the dialog carries signalling, the RTP session the voice (20 ms G.711 frames
 * both ways, handed over SIP_AUDIO_LEAD ahead to the media thread that paces them). JSON frames
 * have no peer on a phone and go nowhere. `control` is the CallControl seam of the call engine:
 * transfer by REFER (blind), DTMF out as RFC 4733 events; keys pressed by the caller go to
 * `handlers.dtmf`.
 *
 * A transfer the trunk refuses goes to `handlers.bridge` when there is one: once bridged, our
 * voice no longer reaches the caller and closing the transport leaves the call to the bridge
 * (no BYE from us).
 */
export function sipTransport(dialog: Dialog, rtp: RtpSession, info: TransportInfo, codec: CodecName, handlers: SipCallHandlers): { transport: CallTransport; link: AudioLink } {
  let closing = false;
  /** The caller is bridged to the transfer's destination: our voice is out of the call. */
  let handedOver = false;
  const control: CallControl = {
    async transfer(destination) {
      const target = destination.startsWith('+') ? `tel:${destination}` : destination;
      let refusal: string | null;
      try {
        refusal = await referRefusal(dialog, target);
      } catch (err) {
        refusal = err instanceof Error ? err.message : 'the REFER failed';
      }
      if (refusal === null) return { ok: true };
      if (!handlers.bridge) return { ok: false, reason: `the trunk refused the transfer (${refusal})` };
      const bridged = await handlers.bridge(destination);
      if (!bridged.ok) return { ok: false, reason: `the trunk refused the transfer (${refusal}) and calling ${destination} failed (${bridged.reason})` };
      handedOver = true;
      rtp.flush();
      return bridged;
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
      if (handedOver) return;
      // The last words (end_call's goodbye) may still be queued on the media thread.
      const drained = Promise.race([rtp.drained(), sleep(SIP_DRAIN_MS)]);
      // The BYE goes out whatever the wait ends in; the dialog logs and counts one that fails.
      void drained.catch(() => undefined).then(() => dialog.bye());
    },
    control,
  };
  const link: AudioLink = {
    format: sipAudioFormat(codec),
    lead: SIP_AUDIO_LEAD,
    sendFrame: (frame, startsRun) => void (handedOver || rtp.send(frame, { startsRun })),
    flushPeer: () => rtp.flush(),
    onAudio: (listener) => void rtp.on('audio', (frame) => listener(frame.payload)),
  };
  rtp.on('dtmf', ({ digit }) => handlers.dtmf(digit));
  dialog.on('dtmf', ({ digit }) => handlers.dtmf(digit));
  void dialog.ended.then((end) => {
    if (!closing) handlers.ended(end);
  });
  return { transport, link };
}
