import type { PacerClock } from '../../voice/pacer-clock.ts';
import { readCompleteness } from '../turns/completeness.ts';
import type { TurnSettings } from '../turns/settings.ts';
import { Backchannels, wordsOf } from '../turns/words.ts';
import type { CallerTurn, VoiceHost } from './voice.ts';

/** What the turn-taker hears through (the Listener): the end of the STT utterance so far. */
export interface TurnInput {
  /** Ends the STT utterance: its final text, and whether the provider itself said the speech ended. */
  finish(): Promise<{ text: string; providerEnded: boolean }>;
  /** A run of speech is under way that the VAD has not yet called speech (it needs startDuration of it). */
  readonly hearing: boolean;
}

/** What it does to the assistant's voice while the caller speaks over it. */
export interface TurnVoice {
  /** Something of the assistant's is being said, or waits to be. */
  speaking(): boolean;
  /** Stops the audio at once, keeping what was not heard (and flushes the peer's buffer). */
  pause(): void;
  resume(): void;
}

type Host = Pick<VoiceHost, 'frame' | 'callerSpeechStarted' | 'callerInterrupted' | 'callerSpeculating' | 'callerSpeculationCancelled' | 'callerSaid' | 'falseInterruption'> & {
  /** Ending the STT utterance failed. */
  sttFailed(error: unknown): void;
};

/** While the VAD hears a run that is not yet speech, a pending end of turn looks again this often. */
const RECHECK_MS = 32;

/** The caller's speech over the assistant, paused while it is judged. */
interface Overlap {
  startedAt: number;
  text: string;
  timer: unknown;
}

/**
 * Who speaks when, on a text_to_speech voice call (docs/voice.md, "Turn-taking"). With `smart`
 * endpointing the caller's turn ends after `minSilence` when what they said reads complete and
 * after up to `maxSilence` when it does not; a turn that reads complete is answered
 * speculatively while its silence is confirmed (the session buffers that answer, and drops it if
 * the caller speaks again). Speech over the assistant pauses its audio at once; a backchannel, a
 * noise or a word or two resumes it, anything more interrupts it. With `vad` it behaves as
 * before: the turn ends after the VAD's stopDuration, and any speech over the assistant cuts it.
 */
export class TurnTaker {
  private readonly backchannels: Backchannels;
  /** What the caller has said of the turn so far (segment finals, one per pause). */
  private text = '';
  private lastSpeechAt = 0;
  /** When a turn that reads complete was speculated on (it ends unless the caller speaks again). */
  private speculating = false;
  private endTimer: unknown = null;
  private overlap: Overlap | null = null;
  /** The speech segment under way, counted so a pause's finish() knows if the caller spoke again meanwhile. */
  private segment = 0;
  private closed = false;

  constructor(
    private readonly settings: TurnSettings,
    private readonly input: TurnInput,
    private readonly voice: TurnVoice,
    private readonly host: Host,
    private readonly clock: Pick<PacerClock, 'now' | 'setTimer' | 'clearTimer'>,
  ) {
    this.backchannels = new Backchannels(settings.backchannels);
  }

  get smart(): boolean {
    return this.settings.endpointing === 'smart';
  }

  /** The VAD decided the caller started speaking. */
  speechStarted(): void {
    if (this.closed) return;
    this.segment++;
    this.host.callerSpeechStarted();
    this.holdTurn();
    if (!this.voice.speaking() || this.overlap) return;
    if (!this.smart) return this.host.callerInterrupted();
    this.startOverlap();
  }

  /** Speech over the assistant: silent at once, judged by what it turns out to be. */
  private startOverlap(): void {
    this.voice.pause();
    this.host.frame({ type: 'turn_paused' });
    const overlap: Overlap = { startedAt: this.clock.now(), text: '', timer: null };
    overlap.timer = this.clock.setTimer(this.settings.interruptionMinDuration * 1000, () => {
      if (this.overlap === overlap && this.isInterruption(overlap.text, this.settings.interruptionMinDuration, false)) this.interrupt();
    });
    this.overlap = overlap;
  }

  /** The STT's words so far, while the caller speaks. */
  interim(text: string): void {
    if (this.closed) return;
    this.host.frame({ type: 'user_transcript', text: [this.text, text].filter(Boolean).join(' '), final: false });
    const overlap = this.overlap;
    if (!overlap) return;
    overlap.text = text;
    if (this.isInterruption(text, (this.clock.now() - overlap.startedAt) / 1000, false)) this.interrupt();
  }

  /** The VAD heard silence after speech; `lastSpeechAt` is when it began (clock time). */
  speechEnded(lastSpeechAt: number): void {
    if (this.closed) return;
    const segment = this.segment;
    this.lastSpeechAt = lastSpeechAt;
    this.input.finish()
      .then(({ text, providerEnded }) => this.segmentHeard(segment, text.trim(), providerEnded))
      .catch((error: unknown) => {
        if (!this.closed) this.host.sttFailed(error);
      });
  }

  close(): void {
    this.closed = true;
    this.holdTurn();
    this.endOverlap();
  }

  private segmentHeard(segment: number, text: string, providerEnded: boolean): void {
    if (this.closed) return;
    const overlap = this.overlap;
    if (overlap) {
      if (this.isInterruption(text, (this.lastSpeechAt - overlap.startedAt) / 1000, true)) this.interrupt();
      else return this.falseInterruption(segment, text);
    }
    this.text = [this.text, text].filter(Boolean).join(' ');
    // The caller already speaks again: the turn goes on, this pause was inside it.
    if (segment !== this.segment || !this.text) return;
    if (!this.smart) return this.endTurn('vad');
    const reading = providerEnded ? { complete: true } : readCompleteness(this.text);
    const wait = (reading.complete ? this.settings.minSilence : this.settings.maxSilence) * 1000;
    if (reading.complete) {
      this.speculating = true;
      this.host.callerSpeculating(this.text);
    }
    const endpointing = providerEnded ? 'provider' : 'smart';
    this.scheduleEnd(Math.max(0, this.lastSpeechAt + wait - this.clock.now()), endpointing);
  }

  private scheduleEnd(delayMs: number, endpointing: CallerTurn['endpointing']): void {
    this.clock.clearTimer(this.endTimer);
    this.endTimer = this.clock.setTimer(delayMs, () => {
      this.endTimer = null;
      // Speech is starting again (the VAD needs startDuration of it to say so): not over yet.
      if (this.input.hearing) return this.scheduleEnd(RECHECK_MS, endpointing);
      this.endTurn(endpointing);
    });
  }

  private endTurn(endpointing: CallerTurn['endpointing']): void {
    const text = this.text;
    this.text = '';
    this.speculating = false;
    this.host.callerSaid(text, { lastSpeechAt: this.lastSpeechAt, endedAt: this.clock.now(), endpointing });
  }

  /** The caller speaks (again): a pending end of turn waits, and a speculative answer is dropped. */
  private holdTurn(): void {
    this.clock.clearTimer(this.endTimer);
    this.endTimer = null;
    if (!this.speculating) return;
    this.speculating = false;
    this.host.callerSpeculationCancelled();
  }

  /**
   * Speech over the assistant is a real interruption unless it is a backchannel or has no words,
   * and only once it has `interruptionMinWords` words or lasted `interruptionMinDuration`. Before
   * the speech has ended, words that may still become a backchannel ("got…") wait.
   */
  private isInterruption(text: string, seconds: number, ended: boolean): boolean {
    const words = wordsOf(text).length;
    if (!words) return false;
    if (ended ? this.backchannels.matches(text) : this.backchannels.couldBe(text)) return false;
    return words >= this.settings.interruptionMinWords || seconds >= this.settings.interruptionMinDuration;
  }

  private interrupt(): void {
    this.endOverlap();
    this.host.callerInterrupted();
  }

  /** Not an interruption: the sound is no turn; the assistant plays on from where it paused (or stays cut). */
  private falseInterruption(segment: number, text: string): void {
    this.endOverlap();
    this.host.falseInterruption(text);
    if (this.settings.resumeAfterFalseInterruption) {
      this.voice.resume();
      this.host.frame({ type: 'turn_resumed' });
    } else {
      this.host.callerInterrupted();
    }
    // The caller went on speaking after the backchannel: that is a new segment, judged afresh.
    if (segment !== this.segment && this.voice.speaking()) this.startOverlap();
  }

  private endOverlap(): void {
    if (!this.overlap) return;
    this.clock.clearTimer(this.overlap.timer);
    this.overlap = null;
  }
}
