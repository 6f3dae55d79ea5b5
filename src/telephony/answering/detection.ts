import type { Timers } from '../../calls/dtmf.ts';
import type { Log } from '../../calls/record.ts';
import type { CallOpener, OpenerVoice } from '../../calls/session.ts';
import type { TimedLink } from '../../calls/voice/timeline.ts';
import type {
  CallDetection, DetectionAction, DetectionSignal, Verdict, VoicemailDetection,
} from '../../calls/voicemail-detection.ts';
import type { SttSession } from '../../voice/stt/stt.ts';
import { FarEnd } from './far-end.ts';
import type { FarEndTap } from './tap.ts';
import { greetingOver, judgeAfterScreening, judgeAnswer, PROMPT_END_MS } from './verdict.ts';
import { WordsFeed } from './words.ts';


/** The far end's frames may stop coming (no RTP at all): the wall clock ends a wait this much after its stream deadline. */
const WALL_SLACK_MS = 1000;
/**
 * After the message, the far end's time before the BYE: a phone or a voicemail box plays out (and
 * records) what its jitter buffer holds only until the BYE comes, and the message's last word
 * was cut there (a baresip phone under load lost the end of the last sentence).
 */
const MESSAGE_TAIL_MS = 500;
/** Signals kept on the record at most (a call's detection notes a handful). */
const MAX_SIGNALS = 32;

export interface DetectionDeps {
  settings: VoicemailDetection;
  /** The far end's words during detection, from a speech-to-text session of its own; null: beep and cadence only. */
  openStt: ((signal: AbortSignal) => Promise<SttSession>) | null;
  /** What to tell a screening assistant when no message says why the agent calls (the LLM, with the agent's prompt). */
  screeningReply(heard: readonly string[], signal: AbortSignal): Promise<string>;
  /** Keeps the detection on the call's record (in order; the verdict before anything is done about it). */
  note(answeredBy: Verdict, detection: CallDetection): Promise<void>;
  timers: Timers;
  log: Log;
}

/**
 * Who answered a placed call, and what the agent does about it (docs/sip.md, "Who answered").
 * It starts with the call, on the far end's frames since the answer, while the voice opens; the
 * greeting goes out at the answer (greeting at_answer) or waits for the verdict (after_verdict).
 * A person (or no verdict within maxWaitSeconds) is greeted, or hears on; a machine has the
 * greeting withdrawn at the verdict; a voicemail box is hung up on, or left the message once its
 * beep ended (or, without a beep, once its greeting was over); a screening assistant is told the
 * agent's name and why it calls, and what comes after decides between a person and a voicemail
 * box. The voice hears the far end only once the call goes on (`gate`): the LLM never answers a
 * greeting, and a machine never barges in on the agent.
 */
export class AnsweringDetection {
  readonly far = new FarEnd();
  /** Settles once detection is over and its record is written. */
  readonly done: Promise<void>;
  #verdict: Verdict = 'unknown';
  #decidedAfterMs: number | null = null;
  #action: DetectionAction | null = null;
  readonly #signals: DetectionSignal[] = [];
  #waiter: (() => void) | null = null;
  #words: WordsFeed | null = null;
  #writes: Promise<void> = Promise.resolve();
  #open = false;
  readonly #ended = new AbortController();
  #provideVoice: (voice: OpenerVoice) => void = () => {};
  readonly #voice = new Promise<OpenerVoice>((resolve) => (this.#provideVoice = resolve));
  /** The voice, once the opener runs: a machine's verdict withdraws the greeting through it. */
  #ready: OpenerVoice | null = null;
  #decideNext: (next: 'greet' | 'hang_up') => void = () => {};
  readonly #next = new Promise<'greet' | 'hang_up'>((resolve) => (this.#decideNext = resolve));

  constructor(private readonly tap: FarEndTap, private readonly deps: DetectionDeps, lifetime: AbortSignal) {
    lifetime.addEventListener('abort', () => this.#ended.abort(), { once: true });
    if (lifetime.aborted) this.#ended.abort();
    this.#note();
    this.done = this.#run().then(() => this.#writes);
  }

  /**
   * The session's opener: with greeting at_answer, the greeting goes out as the voice is ready
   * unless a machine was heard already; speaks what the verdict asks for, then says whether the
   * call goes on.
   */
  readonly opener: CallOpener = {
    greetFirst: () => this.deps.settings.greeting === 'at_answer' && (this.#verdict === 'human' || this.#verdict === 'unknown'),
    run: (voice) => {
      this.#ready = voice;
      this.#provideVoice(voice);
      return this.#next;
    },
  };

  /**
   * The link the voice is opened on: the far end's audio reaches the voice once the call goes on
   * as with a person. The gate sits on the call's timeline, not under it: the recording (a tap of
   * the timeline) keeps the far end from the start, greeting and beep included, in its place.
   */
  readonly gate = (link: TimedLink): TimedLink => {
    const listeners: ((chunk: Buffer, at?: number) => void)[] = [];
    link.onAudio((chunk, at) => {
      if (this.#open) for (const listener of listeners) listener(chunk, at);
    });
    return {
      format: link.format,
      lead: link.lead,
      timeline: link.timeline,
      tap: (tap) => link.tap(tap),
      sendFrame: (frame, startsRun) => link.sendFrame(frame, startsRun),
      flushPeer: () => link.flushPeer(),
      onAudio: (listener) => void listeners.push(listener),
    };
  };

  /**
   * What it means for the agent's task, once detection is over: a person (or no verdict) is a
   * completed call; a machine that took the message is `voicemail_left`; any other machine
   * (hung up on, the greeting never ended, a screener that ended the call) is `voicemail`.
   */
  get taskOutcome(): { status: 'completed' } | { status: 'voicemail' } | { status: 'voicemail_left'; retry: boolean } {
    if (this.#verdict === 'human' || this.#verdict === 'unknown' || this.#action === 'continued') return { status: 'completed' };
    return this.#action === 'left_message' ? { status: 'voicemail_left', retry: this.deps.settings.retryAfterMessage } : { status: 'voicemail' };
  }

  async #run(): Promise<void> {
    let next: 'greet' | 'hang_up' = 'hang_up';
    try {
      await this.#listen();
      next = await this.#decide();
    } catch (err) {
      this.deps.log.warn({ err }, 'answering detection failed; the call goes on as with a person');
      next = this.#goOn();
    } finally {
      this.tap.stop();
      void this.#words?.close().catch(() => undefined);
      if (this.#action === null) {
        this.#signal({ signal: 'ended_early', atMs: this.far.nowMs });
        this.#action = 'ended_early';
      }
      this.#decideNext(next);
      this.#note();
    }
  }

  /** Frames (and, with a speech-to-text, words) start to flow into the far end's picture. */
  async #listen(): Promise<void> {
    const { openStt } = this.deps;
    if (openStt) {
      try {
        const stt = await openStt(this.#ended.signal);
        this.#words = new WordsFeed(stt, {
          heard: (text, atMs, final) => {
            this.far.heard(text, atMs, final);
            this.#waiter?.();
          },
          failed: (err) => this.deps.log.warn({ err }, 'answering detection: the speech-to-text failed; beep and cadence only'),
        });
      } catch (err) {
        this.deps.log.warn({ err }, 'answering detection: the speech-to-text could not be opened; beep and cadence only');
      }
    }
    this.tap.read((pcm, concealed) => this.#frame(pcm, concealed));
  }

  #frame(pcm: Int16Array, concealed: boolean): void {
    const scaled = new Float32Array(pcm.length);
    for (let i = 0; i < pcm.length; i++) scaled[i] = pcm[i]! / 32768;
    const atMs = this.far.nowMs;
    const speech = this.far.push(scaled, concealed);
    this.#words?.push(pcm, atMs, speech);
    this.#waiter?.();
  }

  async #decide(): Promise<'greet' | 'hang_up'> {
    const { settings } = this.deps;
    const options = { words: this.#words !== null, detectScreening: settings.detectScreening };
    const first = await this.#watch(() => judgeAnswer(this.far, options, 0), settings.maxWaitMs);
    if (first === 'ended') return 'hang_up';
    if (first === 'timeout') {
      this.#signal({ signal: 'timeout', atMs: this.far.nowMs });
      this.#decided('unknown');
      return this.#goOn();
    }
    this.#signal(first.signal);
    this.#decided(first.verdict);
    if (first.verdict === 'human') return this.#goOn();
    // The verdict is on the record before anything is done about it (a hang-up's call_ended carries it).
    await this.#writes;
    return first.verdict === 'screening' ? this.#screening() : this.#voicemail(settings.maxWaitMs);
  }

  async #voicemail(deadlineMs: number): Promise<'greet' | 'hang_up'> {
    const { action, message } = this.deps.settings;
    if (action === 'hang_up' || !message) return this.#act('hung_up');
    const moment = await this.#watch(() => greetingOver(this.far), deadlineMs);
    if (moment === 'ended') return 'hang_up';
    if (moment === 'timeout') {
      this.#signal({ signal: 'timeout', atMs: this.far.nowMs });
      return this.#act('message_not_left');
    }
    if (!this.#signals.some((s) => s.signal === moment.signal && s.atMs === moment.atMs)) this.#signal(moment);
    this.#signal({ signal: 'message_started', atMs: this.far.nowMs });
    const said = await this.#speak(message);
    if (!said) return 'hang_up';
    this.#signal({ signal: said.interrupted ? 'message_cut' : 'message_ended', atMs: this.far.nowMs });
    if (!said.interrupted) await this.#watch(() => null, this.far.nowMs + MESSAGE_TAIL_MS);
    return this.#act(said.interrupted ? 'message_not_left' : 'left_message');
  }

  async #screening(): Promise<'greet' | 'hang_up'> {
    const { settings } = this.deps;
    const prompt = await this.#watch(() => greetingOver(this.far, PROMPT_END_MS, 'prompt_ended'), settings.maxWaitMs);
    if (prompt === 'ended') return 'hang_up';
    if (prompt === 'timeout') {
      this.#signal({ signal: 'timeout', atMs: this.far.nowMs });
      return this.#act('hung_up');
    }
    this.#signal(prompt);
    const reply = settings.message
      ? `This is ${settings.agentName}. ${settings.message}`
      : await this.deps.screeningReply(this.far.words, this.#ended.signal).catch(() => `This is ${settings.agentName}. Please put me through.`);
    this.#signal({ signal: 'screening_answered', atMs: this.far.nowMs });
    const said = await this.#speak(reply);
    if (!said) return 'hang_up';
    const since = this.far.nowMs;
    this.far.speech.reset();
    const next = await this.#watch(() => judgeAfterScreening(this.far, since), since + settings.maxWaitMs);
    if (next === 'ended') return 'hang_up';
    if (next === 'timeout') {
      this.#signal({ signal: 'timeout', atMs: this.far.nowMs });
      return this.#goOn();
    }
    this.#signal(next.signal);
    if (next.verdict === 'human') return this.#goOn();
    return this.#voicemail(this.far.nowMs + settings.maxWaitMs);
  }

  /** Says `text` once the voice is ready; null when the call ended first. */
  async #speak(text: string): Promise<{ heard: string; interrupted: boolean } | null> {
    const ended = new Promise<null>((resolve) => {
      if (this.#ended.signal.aborted) resolve(null);
      this.#ended.signal.addEventListener('abort', () => resolve(null), { once: true });
    });
    const voice = await Promise.race([this.#voice, ended]);
    return voice ? voice.say(text) : null;
  }

  /**
   * The first judgement that is not null, made again after every frame and every words; 'timeout'
   * once the far end's stream passes `deadlineMs`, 'ended' when the call ends first.
   */
  #watch<T>(judge: () => T | null, deadlineMs: number): Promise<T | 'timeout' | 'ended'> {
    return new Promise((resolve) => {
      const { timers } = this.deps;
      let timer: unknown = null;
      const settle = (result: T | 'timeout' | 'ended'): void => {
        this.#waiter = null;
        timers.clearTimer(timer);
        this.#ended.signal.removeEventListener('abort', onEnd);
        resolve(result);
      };
      const onEnd = (): void => settle('ended');
      if (this.#ended.signal.aborted) return resolve('ended');
      this.#ended.signal.addEventListener('abort', onEnd, { once: true });
      timer = timers.setTimer(deadlineMs - this.far.nowMs + WALL_SLACK_MS, () => settle('timeout'), { unref: true });
      this.#waiter = () => {
        const result = judge();
        if (result !== null) settle(result);
        else if (this.far.nowMs >= deadlineMs) settle('timeout');
      };
      this.#waiter();
    });
  }

  #goOn(): 'greet' {
    this.#open = true;
    this.#act('continued');
    return 'greet';
  }

  #act(action: DetectionAction): 'greet' | 'hang_up' {
    this.#action = action;
    return action === 'continued' ? 'greet' : 'hang_up';
  }

  #decided(verdict: Verdict): void {
    this.#verdict = verdict;
    this.#decidedAfterMs = this.far.nowMs;
    // A machine: nothing more of a greeting said at the answer goes out (before the verdict is written).
    if ((verdict === 'voicemail' || verdict === 'screening') && this.#ready?.withdrawGreeting()) {
      this.#signal({ signal: 'greeting_withdrawn', atMs: this.far.nowMs });
    }
    this.deps.log.info({ verdict, decidedAfterMs: this.far.nowMs, signals: this.#signals.map((s) => s.signal) }, `answered by ${verdict}`);
    this.#note();
  }

  #signal(signal: DetectionSignal): void {
    if (this.#signals.length < MAX_SIGNALS) this.#signals.push(signal);
  }

  /** Writes what is known now, after the writes before it. */
  #note(): void {
    const detection: CallDetection = { verdict: this.#verdict, decidedAfterMs: this.#decidedAfterMs, action: this.#action, signals: [...this.#signals] };
    this.#writes = this.#writes
      .then(() => this.deps.note(this.#verdict, detection))
      .catch((err: unknown) => this.deps.log.warn({ err }, 'answering detection: could not keep it on the record'));
  }
}
