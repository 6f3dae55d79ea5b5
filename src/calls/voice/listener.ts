import { createDecoder, PIPELINE_RATE, type AudioDecoder } from '../../voice/audio/format.ts';
import type { PacerClock } from '../../voice/pacer-clock.ts';
import type { SttSession } from '../../voice/stt/stt.ts';
import type { Vad } from '../../voice/vad.ts';
import type { AudioLink } from './link.ts';
import type { TurnInput } from './turn-taker.ts';

export interface ListenerEvents {
  /** The VAD decided the caller started speaking; `audioAt`: where the speech began on the call's timeline, when the link is timed. */
  speechStarted(audioAt?: number): void;
  /** The caller's words of the current STT utterance so far, when the provider gives interim hypotheses. */
  interim(text: string): void;
  /** The VAD heard enough silence after speech; `lastSpeechAt` is when the silence began (clock time, ms), `audioAt` where, on the call's timeline. */
  speechEnded(lastSpeechAt: number, audioAt?: number): void;
  /** The provider's own end-of-speech signal for the utterance (Deepgram's speech_final). */
  providerEnded(): void;
  /** The STT provider (or the VAD) failed. */
  failed(error: unknown): void;
}

/** Audio pushes waiting for the VAD; past this new audio is dropped until the VAD catches up (an overloaded process must not pile up audio; what is queued stays in order). */
const MAX_PENDING = 50;
/** Where the timeline jumped (a gap in what the caller sent), newest last: enough for any turn, bounded. */
const MAX_JUMPS = 64;

/**
 * The VAD's stream time (ms of audio pushed) on the call's timeline: the two run together,
 * except where the caller's audio had a gap (the timeline then jumps ahead).
 */
class StreamTimes {
  private readonly jumps: { stream: number; at: number }[] = [];
  private streamEnd = 0;
  private timelineEnd: number | null = null;

  /** A chunk of `ms` pushed to the VAD, placed at `at` on the timeline. */
  pushed(ms: number, at: number | undefined): void {
    if (at !== undefined && (this.timelineEnd === null || Math.abs(at - this.timelineEnd) > 0.5)) {
      this.jumps.push({ stream: this.streamEnd, at });
      if (this.jumps.length > MAX_JUMPS) this.jumps.shift();
    }
    this.streamEnd += ms;
    if (at !== undefined) this.timelineEnd = at + ms;
  }

  /** Where the VAD's stream time `ms` lies on the timeline; undefined on a link without one. */
  at(ms: number): number | undefined {
    let jump = this.jumps[0];
    if (!jump) return undefined;
    for (const j of this.jumps) if (j.stream <= ms) jump = j;
    return jump.at + (ms - jump.stream);
  }
}

/**
 * The caller's side: audio from the link is decoded to 16 kHz PCM, run through the VAD, and
 * the speech between its start and end goes to the STT session (the backbuffer first). Pushes
 * to the VAD run one after the other, in order. When an utterance ends is the turn-taker's to
 * say (finish()): once per turn, and once per sound over the assistant that was no interruption.
 */
export class Listener implements TurnInput {
  private readonly decoder: AudioDecoder;
  private chain: Promise<void> = Promise.resolve();
  /** Final transcripts, one utterance after the other (a provider finalises one at a time). */
  private finals: Promise<unknown> = Promise.resolve();
  private ended = false;
  private pending = 0;
  private closed = false;
  private readonly times = new StreamTimes();

  constructor(
    link: AudioLink,
    private readonly vad: Vad,
    private readonly stt: SttSession,
    private readonly clock: Pick<PacerClock, 'now'>,
    private readonly events: ListenerEvents,
  ) {
    this.decoder = createDecoder(link.format, PIPELINE_RATE);
    stt.onInterim = (text) => events.interim(text);
    stt.onError = (error) => {
      if (!this.closed) events.failed(error);
    };
    stt.onSpeechFinal = () => {
      this.ended = true;
      events.providerEnded();
    };
    link.onAudio((chunk, at) => this.hear(chunk, at));
  }

  get hearing(): boolean {
    return this.vad.hearing;
  }

  /** The STT gives interim hypotheses (the text so far comes as `interim` events); else preview() asks for it. */
  get streaming(): boolean {
    return !this.stt.preview;
  }

  /** The provider said the utterance's speech ended (Deepgram's speech_final), since the utterance began. */
  get providerEnded(): boolean {
    return this.ended;
  }

  /** A provider without interim hypotheses: the text of the utterance so far, without ending it. */
  preview(): Promise<string> {
    return this.stt.preview?.() ?? Promise.resolve('');
  }

  /** Ends the STT utterance (in order with the ones before): its final text. */
  finish(): Promise<string> {
    const result = this.finals.then(async () => {
      const text = await this.stt.endUtterance();
      this.ended = false;
      return text;
    });
    this.finals = result.catch(() => undefined);
    return result;
  }

  close(): void {
    this.closed = true;
  }

  private hear(chunk: Buffer, at?: number): void {
    if (this.closed) return;
    const pcm = this.decoder.decode(chunk);
    if (!pcm.length) return;
    if (this.pending >= MAX_PENDING) return;
    this.pending++;
    this.times.pushed((pcm.length * 1000) / PIPELINE_RATE, at);
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
        this.events.speechStarted(this.times.at(event.atMs));
        this.stt.write(event.audio);
      } else if (event.type === 'speech') {
        this.stt.write(event.audio);
      } else {
        // The silence began (decidedMs - atMs) of stream time before the VAD could say so.
        this.events.speechEnded(this.clock.now() - (event.decidedMs - event.atMs), this.times.at(event.atMs));
      }
    }
  }
}
