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
  readonly #held: [Int16Array, boolean][] = [];
  #reader: ((pcm: Int16Array, concealed: boolean) => void) | null = null;
  readonly #decode: (bytes: Uint8Array) => Int16Array;
  readonly #onAudio = ({ payload, missing }: { payload: Buffer; missing: number }) => {
    const pcm = this.#decode(payload);
    const concealed = missing > 0;
    if (this.#reader) this.#reader(pcm, concealed);
    else if (this.#held.length < MAX_HELD) this.#held.push([pcm, concealed]);
  };

  constructor(private readonly rtp: RtpSession, codec: CodecName) {
    const law = codec === 'PCMA' ? alawmulaw.alaw : alawmulaw.mulaw;
    this.#decode = (bytes) => law.decode(bytes);
    rtp.on('audio', this.#onAudio);
  }

  /**
   * Every frame so far, then each as it comes; `concealed` when the jitter buffer filled some of
   * it with silence (the packets were late or lost): such a frame says nothing about the far end.
   */
  read(reader: (pcm: Int16Array, concealed: boolean) => void): void {
    this.#reader = reader;
    for (const [pcm, concealed] of this.#held.splice(0)) reader(pcm, concealed);
  }

  stop(): void {
    this.rtp.off('audio', this.#onAudio);
    this.#reader = null;
    this.#held.length = 0;
  }
}
