import type { PacerClock } from '../../voice/pacer-clock.ts';
import { readCompleteness } from '../turns/completeness.ts';
import type { TurnSettings } from '../turns/settings.ts';
import { Backchannels, wordsOf } from '../turns/words.ts';
import type { CallerTurn, VoiceHost } from './voice.ts';

/** What the turn-taker hears through (the Listener): the STT utterance and the VAD's state. */
export interface TurnInput {
  /** The STT gives interim hypotheses (the text so far comes to interim()); else preview() asks for it. */
  readonly streaming: boolean;
  /** The provider itself said the utterance's speech ended. */
  readonly providerEnded: boolean;
  /** A run of speech is under way that the VAD has not yet called speech (it needs startDuration of it). */
  readonly hearing: boolean;
  /** The text of the utterance so far, without ending it (providers without interim hypotheses). */
  preview(): Promise<string>;
  /** Ends the STT utterance: its final text. */
  finish(): Promise<string>;
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
  /** The STT failed. */
  sttFailed(error: unknown): void;
};

/** While the VAD hears a run that is not yet speech, a pending end of turn looks again this often. */
const RECHECK_MS = 32;

/** The caller's speech over the assistant, paused while it is judged. */
interface Overlap {
  startedAt: number;
  timer: unknown;
}

/**
 * Who speaks when, on a text_to_speech voice call (docs/voice.md, "Turn-taking"). With `smart`
 * endpointing the caller's turn ends after `minSilence` when what they said so far reads
 * complete, and after up to `maxSilence` when it does not, read again whenever the STT's text
 * changes during the pause; a turn that reads complete is answered speculatively while its
 * silence is confirmed (the session holds that answer back, and drops it if the caller speaks
 * again). Speech over the assistant pauses its audio at once; a backchannel, a sound without
 * words or a word or two resumes it, anything more interrupts it. With `vad` it behaves as
 * before: the turn ends after the VAD's stopDuration, and any speech over the assistant cuts it.
 * One STT utterance is one turn (or one sound over the assistant), so a provider transcribes a
 * turn with its pauses as a whole.
 */
export class TurnTaker {
  private readonly backchannels: Backchannels;
  /** The STT's text of the utterance so far. */
  private heard = '';
  /** When the caller's speech last stopped, while they are silent; null while they speak. */
  private pausedSince: number | null = null;
  /** The text a speculative answer was begun on, while it stands. */
  private speculated: string | null = null;
  private endTimer: unknown = null;
  private overlap: Overlap | null = null;
  /** Bumped at every speech start: a preview or a judgement that comes back later knows whether the caller spoke again. */
  private segment = 0;
  /** Where the turn's speech began and last stopped on the call's timeline (a timed link). */
  private audio: { startMs: number; endMs: number } | null = null;
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

  private get smart(): boolean {
    return this.settings.endpointing === 'smart';
  }

  /** The VAD decided the caller started speaking (at `audioAt` on the call's timeline). */
  speechStarted(audioAt?: number): void {
    if (this.closed) return;
    if (audioAt !== undefined) this.audio ??= { startMs: audioAt, endMs: audioAt };
    this.segment++;
    this.pausedSince = null;
    this.host.callerSpeechStarted();
    this.holdTurn();
    if (!this.voice.speaking() || this.overlap) return;
    if (!this.smart) return this.host.callerInterrupted();
    this.startOverlap();
  }

  /** The STT's text of the utterance so far, while the caller speaks (or just stopped). */
  interim(text: string): void {
    if (this.closed) return;
    this.heard = text;
    this.host.frame({ type: 'user_transcript', text, final: false });
    if (this.overlap) {
      if (this.isInterruption(text, (this.clock.now() - this.overlap.startedAt) / 1000, false)) this.interrupt();
      return;
    }
    if (this.pausedSince !== null) this.evaluate();
  }

  /** The provider itself heard the speech end: the turn reads complete. */
  providerEnded(): void {
    if (!this.closed && this.pausedSince !== null && !this.overlap) this.evaluate();
  }

  /** The VAD heard silence after speech; `lastSpeechAt` is when it began (clock time), `audioAt` where on the call's timeline. */
  speechEnded(lastSpeechAt: number, audioAt?: number): void {
    if (this.closed) return;
    this.pausedSince = lastSpeechAt;
    if (this.audio && audioAt !== undefined) this.audio.endMs = Math.max(this.audio.startMs, audioAt);
    if (!this.smart && !this.overlap) return this.endTurn('vad');
    const segment = this.segment;
    const text = this.input.streaming ? Promise.resolve(this.heard) : this.input.preview();
    text.then((heard) => {
      if (this.closed || segment !== this.segment) return;
      this.heard = heard;
      if (this.overlap) this.judgeOverlap(lastSpeechAt);
      else this.evaluate();
    }, (error: unknown) => {
      if (!this.closed) this.host.sttFailed(error);
    });
  }

  close(): void {
    this.closed = true;
    this.holdTurn();
    this.endOverlap();
  }

  /** Smart endpointing during a pause: when the turn ends, by how the words so far read. */
  private evaluate(): void {
    const since = this.pausedSince;
    if (since === null || !wordsOf(this.heard).length) return;
    const provider = this.input.providerEnded;
    const complete = provider || readCompleteness(this.heard).complete;
    if (complete && this.speculated !== this.heard) {
      if (this.speculated !== null) this.host.callerSpeculationCancelled();
      this.speculated = this.heard;
      this.host.callerSpeculating(this.heard);
    }
    const wait = (complete ? this.settings.minSilence : this.settings.maxSilence) * 1000;
    this.scheduleEnd(Math.max(0, since + wait - this.clock.now()), provider ? 'provider' : 'smart');
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

  /** The turn is over: the STT's final text is the caller's turn. */
  private endTurn(endpointing: CallerTurn['endpointing']): void {
    const lastSpeechAt = this.pausedSince ?? this.clock.now();
    const endedAt = this.clock.now();
    const heard = this.heard;
    const audio = this.audio;
    this.audio = null;
    this.heard = '';
    this.speculated = null;
    this.input.finish().then((text) => {
      const said = text.trim() || heard;
      if (!this.closed && said) this.host.callerSaid(said, { lastSpeechAt, endedAt, endpointing, ...(audio ? { audio } : {}) });
    }, (error: unknown) => {
      if (!this.closed) this.host.sttFailed(error);
    });
  }

  /** The caller speaks (again): a pending end of turn waits, and a speculative answer is dropped. */
  private holdTurn(): void {
    this.clock.clearTimer(this.endTimer);
    this.endTimer = null;
    if (this.speculated === null) return;
    this.speculated = null;
    this.host.callerSpeculationCancelled();
  }

  /** Speech over the assistant: silent at once, judged by what it turns out to be. */
  private startOverlap(): void {
    this.voice.pause();
    this.host.frame({ type: 'turn_paused' });
    const overlap: Overlap = { startedAt: this.clock.now(), timer: null };
    overlap.timer = this.clock.setTimer(this.settings.interruptionMinDuration * 1000, () => {
      if (this.overlap === overlap && this.isInterruption(this.heard, this.settings.interruptionMinDuration, false)) this.interrupt();
    });
    this.overlap = overlap;
  }

  /** The sound over the assistant has stopped: an interruption, or not. */
  private judgeOverlap(lastSpeechAt: number): void {
    const overlap = this.overlap!;
    if (this.isInterruption(this.heard, (lastSpeechAt - overlap.startedAt) / 1000, true)) {
      this.interrupt();
      return this.evaluate();
    }
    this.falseInterruption();
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

  /** Not an interruption: the sound is no turn (its utterance is dropped); the assistant plays on from where it paused, or stays cut. */
  private falseInterruption(): void {
    const text = this.heard;
    this.endOverlap();
    this.heard = '';
    this.audio = null;
    this.pausedSince = null;
    this.input.finish().catch((error: unknown) => {
      if (!this.closed) this.host.sttFailed(error);
    });
    this.host.falseInterruption(text);
    if (this.settings.resumeAfterFalseInterruption) {
      this.voice.resume();
      this.host.frame({ type: 'turn_resumed' });
    } else {
      this.host.callerInterrupted();
    }
  }

  private endOverlap(): void {
    if (!this.overlap) return;
    this.clock.clearTimer(this.overlap.timer);
    this.overlap = null;
  }
}
