import alawmulaw from 'alawmulaw';
import type { RtpSession } from '../../sip/rtp/session.ts';
import type { CodecName } from '../../sip/sdp.ts';

/** A minute of frames: more than any detection waits for before it reads them. */
const MAX_HELD = 3000;

/**
 * The far end's audio from the moment a placed call is answered, frame by frame (20 ms of 8 kHz
 * PCM, as the RTP session plays it out of its jitter buffer). Frames are held until detection
 * reads them (the call's setup is read from the database first), so the first word after the
 * answer is never missed; `stop` drops them when the call has no detection.
 */
export class FarEndTap {
  readonly #held: Int16Array[] = [];
  #reader: ((pcm: Int16Array) => void) | null = null;
  readonly #decode: (bytes: Uint8Array) => Int16Array;
  readonly #onAudio = ({ payload }: { payload: Buffer }) => {
    const pcm = this.#decode(payload);
    if (this.#reader) this.#reader(pcm);
    else if (this.#held.length < MAX_HELD) this.#held.push(pcm);
  };

  constructor(private readonly rtp: RtpSession, codec: CodecName) {
    const law = codec === 'PCMA' ? alawmulaw.alaw : alawmulaw.mulaw;
    this.#decode = (bytes) => law.decode(bytes);
    rtp.on('audio', this.#onAudio);
  }

  /** Every frame so far, then each as it comes. */
  read(reader: (pcm: Int16Array) => void): void {
    this.#reader = reader;
    for (const pcm of this.#held.splice(0)) reader(pcm);
  }

  stop(): void {
    this.rtp.off('audio', this.#onAudio);
    this.#reader = null;
    this.#held.length = 0;
  }
}
