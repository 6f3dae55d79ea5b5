import { createDecoder, PIPELINE_RATE, type AudioDecoder } from '../../voice/audio/format.ts';
import type { SttSession } from '../../voice/stt/stt.ts';
import type { Vad } from '../../voice/vad.ts';
import type { AudioLink } from './link.ts';

export interface ListenerEvents {
  /** The VAD decided the caller started speaking (`at`: performance.now() of the decision). */
  speechStarted(at: number): void;
  /** The caller's words so far, when the STT provider gives interim hypotheses. */
  interim(text: string): void;
  /** The caller finished an utterance (`endedAt`: performance.now() when the VAD decided so). */
  utterance(text: string, endedAt: number): void;
  /** The STT provider (or the VAD) failed. */
  failed(error: unknown): void;
}

/** Audio pushes waiting for the VAD; past this the oldest are dropped (an overloaded process must not pile up audio). */
const MAX_PENDING = 50;

/**
 * The caller's side: audio from the link is decoded to 16 kHz PCM, run through the VAD, and
 * the speech between its start and end goes to the STT session (the backbuffer first). Pushes
 * to the VAD run one after the other, in order.
 */
export class Listener {
  private readonly decoder: AudioDecoder;
  private chain: Promise<void> = Promise.resolve();
  /** Final transcripts, one utterance after the other (a provider finalises one at a time). */
  private finals: Promise<void> = Promise.resolve();
  private pending = 0;
  private closed = false;

  constructor(
    link: AudioLink,
    private readonly vad: Vad,
    private readonly stt: SttSession,
    private readonly events: ListenerEvents,
  ) {
    this.decoder = createDecoder(link.format, PIPELINE_RATE);
    stt.onInterim = (text) => events.interim(text);
    link.onAudio((chunk) => this.hear(chunk));
  }

  close(): void {
    this.closed = true;
  }

  private hear(chunk: Buffer): void {
    if (this.closed) return;
    const pcm = this.decoder.decode(chunk);
    if (!pcm.length) return;
    if (this.pending >= MAX_PENDING) return;
    this.pending++;
    this.chain = this.chain
      .then(() => this.process(pcm))
      .catch((error: unknown) => {
        if (!this.closed) this.events.failed(error);
      })
      .finally(() => this.pending--);
  }

  private async process(pcm: Int16Array): Promise<void> {
    if (this.closed) return;
    for (const event of await this.vad.push(pcm)) {
      if (this.closed) return;
      if (event.type === 'speech_start') {
        this.events.speechStarted(performance.now());
        this.stt.write(event.audio);
      } else if (event.type === 'speech') {
        this.stt.write(event.audio);
      } else {
        const endedAt = performance.now();
        // Not awaited here: the VAD goes on hearing (a barge-in must not wait for a transcript).
        this.finals = this.finals
          .then(() => this.stt.endUtterance())
          .then((text) => {
            if (text.trim() && !this.closed) this.events.utterance(text.trim(), endedAt);
          })
          .catch((error: unknown) => {
            if (!this.closed) this.events.failed(error);
          });
      }
    }
  }
}
