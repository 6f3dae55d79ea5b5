import type { ChatCompletionMessageParam } from 'openai/resources/chat/completions';
import { ClientToolAnswers, type ClientToolAnswer } from './client-tools.ts';
import { offeredControls, type ControlTool } from './control-tools.ts';
import type { DispatchResult } from './dispatch.ts';
import { systemPacerClock, type PacerClock } from '../voice/pacer-clock.ts';
import { DtmfGather, dtmfText } from './dtmf.ts';
import type { EndReason, ServerFrame } from './frames.ts';
import { describeLlmFailure } from './llm.ts';
import type { CallFailure } from './failure.ts';
import {
  outcomeOf, type CallLogEntry, type CallSetup, type SessionDeps, type ToolInvocation, type TranscriptEntry,
} from './record.ts';
import type { ToolCallRequest } from './tool-call.ts';
import type { CallTransport } from './transports/transport.ts';
import { Speculation } from './speculation.ts';
import { historyWindow, runToolCalls, runTurn, turnTools, type ToolHost, type TurnHost } from './turn.ts';
import { turnLatency } from './turns/latency.ts';
import { Utterance, type UtteranceKind } from './utterance.ts';
import type { AudioTimeline } from './voice/timeline.ts';
import type { CallVoice, CallerTurn, ConversingVoice, VoiceHost } from './voice/voice.ts';

const MAX_WAITING = 20;
const utf8 = (text: string) => Buffer.byteLength(text, 'utf8');
/** Said on a voice call while tools take long; kept out of the LLM's history. */
export const TOOL_FILLER = 'One moment, please.';
/** Said on a voice call when a provider fails, if the call can still speak. */
export const APOLOGY = 'Sorry, something went wrong on our side. Please call again later. Goodbye.';
/** How the LLM's history marks an answer the caller cut off (docs/voice.md, "Turn-taking"): after what they heard of it. */
export const INTERRUPTED_MARK = '[interrupted by the caller]';

/** A user turn waiting to be answered: typed, spoken (with how it ended and maybe a speculative answer), or gathered keys. */
interface Inbound {
  text: string;
  endedAt: number;
  dtmf?: string;
  turn?: CallerTurn;
  speculation?: Speculation;
}

/** What an opener may do with the call's voice. */
export interface OpenerVoice {
  /** Says `text` (recorded as the assistant's words, kept out of the LLM's history). */
  say(text: string): Promise<{ heard: string; interrupted: boolean }>;
  /**
   * The greeting said at the answer (greetFirst) was for a machine: what is left of it is cut like
   * a barge-in, it leaves the LLM's history, and a call that goes on is greeted anew. True when
   * some of it was still to be sent.
   */
  withdrawGreeting(): boolean;
}

/**
 * What a voice call does once its voice is ready (the answering-machine detection of a placed
 * call, src/telephony/answering/): the greeting goes out first when `greetFirst()` says so; the
 * opener may withdraw it and say things of its own, then answers whether the call goes on
 * (greeting first, unless the one said at the answer stands) or hangs up.
 */
export interface CallOpener {
  greetFirst(): boolean;
  run(voice: OpenerVoice): Promise<'greet' | 'hang_up'>;
}

/**
 * One live call: the greeting, then one turn per user message (queued while a turn runs),
 * the idle, total, turn and transcript limits, and the record, appended as the call runs.
 * A voice call (attachVoice) speaks what the LLM writes and keeps in its transcript and
 * history what the caller heard; with a realtime voice the model holds the conversation, and
 * the session records it, runs its tools and keeps the limits. Keys the caller presses are
 * gathered into turns of their own. Ending is idempotent and aborts whatever runs.
 */
export class CallSession {
  readonly transcript: TranscriptEntry[] = [];
  readonly toolInvocations: ToolInvocation[] = [];
  private readonly messages: ChatCompletionMessageParam[] = [];
  /** User turns waiting to be answered; `dtmf` marks gathered keys (recorded as such). */
  private readonly inbox: Inbound[] = [];
  private readonly pending: CallLogEntry[] = [];
  private readonly abort = new AbortController();
  private turnAbort = new AbortController();
  private transport: CallTransport | null = null;
  private voice: CallVoice | null = null;
  /** Voice: where the call's audio lies in time, for the transcript's startMs and endMs. */
  private timeline: AudioTimeline | null = null;
  private running = false;
  private turns = 0;
  private transcriptBytes = 0;
  private utteranceCount = 0;
  /** performance.now() when the current turn's user message ended, until its first output. */
  private turnStartedAt: number | null = null;
  /** Voice: every utterance handed to the voice and not over yet. */
  private readonly utterances = new Map<string, Utterance>();
  /** Voice: the answer the current LLM round is speaking, and how its text reaches the voice. */
  private answering: { utterance: Utterance; write: { delta(text: string): void; end(): void } } | null = null;
  private readonly keys: DtmfGather;
  private readonly timers: PacerClock;
  /** A call whose client answers its tool webhooks: the tool calls waiting for its tool_answer frames. */
  private readonly clientTools: ClientToolAnswers | null;
  /** Voice: an answer begun before the caller's turn was confirmed, with the history length it was begun on. */
  private speculation: { answer: Speculation; historyLength: number } | null = null;
  /** Voice: the spoken turn being answered, until its first audio frame went out. */
  private answeringTurn: { turn: CallerTurn; firstTokenAt: number | null } | null = null;
  private readonly turnStats = { falseInterruptions: 0, speculativeStarts: 0, speculativeDiscards: 0 };
  private ending: Promise<void> | null = null;
  private saving: Promise<void> = Promise.resolve();
  private idleTimer: unknown = null;
  private maxTimer: unknown = null;
  private markDone: () => void = () => {};
  /** A voice call's turns wait for its voice (a key or a text frame can come before it is open), so every answer is spoken. */
  private voiceReady: Promise<void> = Promise.resolve();
  private markVoiceReady: () => void = () => {};
  private opener: CallOpener | null = null;
  /** Settles once the call has ended and its record is written. */
  readonly done = new Promise<void>((resolve) => (this.markDone = resolve));

  constructor(
    private readonly setup: CallSetup,
    private readonly deps: SessionDeps,
  ) {
    this.timers = deps.timers ?? systemPacerClock;
    this.keys = new DtmfGather(this.timers, (keys) => this.keysGathered(keys));
    this.clientTools = setup.clientTools ? new ClientToolAnswers(this.timers) : null;
  }

  get callId(): string {
    return this.setup.callId;
  }

  /**
   * Connects the call; `audio` names the format of a voice call's audio (its voice is attached
   * once its providers are open, and the greeting waits for it, and for `opener` when given).
   */
  start(transport: CallTransport, audio?: { encoding: string; sampleRate: number }, opener?: CallOpener): void {
    this.transport = transport;
    this.opener = opener ?? null;
    if (audio) this.voiceReady = new Promise((resolve) => (this.markVoiceReady = resolve));
    const { unfilled } = this.setup;
    // A text call greets at once (below): the client is told, so it waits for the greeting before its first message.
    const greets = !audio && !this.setup.failure && Boolean(this.setup.greeting);
    this.emit({ type: 'call_started', callId: this.setup.callId, ...(unfilled.length ? { unfilledPlaceholders: unfilled } : {}), ...(audio ? { audio } : {}), ...(greets ? { greeting: true as const } : {}) });
    // A call whose setup cannot work (an LLM without a key) ends as it starts, saying why.
    if (this.setup.failure) return void this.fail(this.setup.failure);
    if (!audio) this.greet();
    this.maxTimer = this.timers.setTimer(this.deps.limits.maxMs, () => void this.end('max_duration'), { unref: true });
    this.touch();
  }

  /** The call-control tools this call's model may use: end_call always, the rest when its transport can. */
  offeredControls(): ControlTool[] {
    return offeredControls(this.setup.controls, this.transport?.control);
  }

  /** A voice call's audio is placed on this timeline (its transport's link, timed): the transcript says where each utterance lies. */
  useTimeline(timeline: AudioTimeline): void {
    this.timeline = timeline;
  }

  /** A voice call's voice is ready: it greets (after the opener, when there is one), and speaks every answer from now on. */
  attachVoice(voice: CallVoice): void {
    if (this.ending) return void voice.close();
    this.voice = voice;
    if (this.opener) return void this.open(this.opener);
    this.begin();
  }

  /** The greeting (unless one was said already), then the conversation: turns that waited for the voice run. */
  private begin(greeted = false): void {
    if (!greeted) this.greet();
    this.markVoiceReady();
    if (this.voice?.kind === 'realtime') for (const { text, endedAt } of this.inbox.splice(0)) this.tell(this.voice, text, endedAt);
  }

  /** The opener runs before anything else is said but the greeting it asks for first; a failing one leaves the call to go on as usual. */
  private async open(opener: CallOpener): Promise<void> {
    let early = opener.greetFirst() ? this.greet() : null;
    const withdrawGreeting = (): boolean => {
      const greeting = early;
      early = null;
      return greeting ? this.withdraw(greeting) : false;
    };
    const next = await opener.run({ say: (text) => this.sayFirst(text), withdrawGreeting }).catch(() => 'greet' as const);
    if (this.ending) return;
    if (next === 'hang_up') return void this.end('assistant_ended');
    this.begin(early !== null);
  }

  /**
   * The greeting leaves the LLM's history (it was said to a machine); what is still to be sent of
   * it is cut as a barge-in cuts (the transcript keeps what went out, marked interrupted). True
   * when some of it was still to go out.
   */
  private withdraw(greeting: Utterance): boolean {
    const { message } = greeting;
    greeting.message = undefined;
    const at = message ? this.messages.indexOf(message) : -1;
    if (at >= 0) this.messages.splice(at, 1);
    const going = this.utterances.has(greeting.id);
    // Over for the voice, its last frames may still wait for the wire (SIP's media thread takes them
    // up to its lead ahead): those are dropped too. Before the verdict nothing else is said.
    const queued = this.voice?.kind === 'pipeline' && this.timeline !== null && this.timeline.playEnd > this.timeline.now();
    if (going || queued) this.voice?.interrupt();
    return going || queued;
  }

  /** The opener's words: kept in the transcript as the assistant's, not in the LLM's history. */
  private async sayFirst(text: string): Promise<{ heard: string; interrupted: boolean }> {
    if (this.ending) return { heard: '', interrupted: true };
    this.emit({ type: 'assistant_message', text });
    const utterance = this.utter('announcement', text);
    await utterance.done;
    return { heard: utterance.heard ?? '', interrupted: utterance.interrupted };
  }

  /** Aborts when the call ends: what lives as long as the call listens to it. */
  get lifetime(): AbortSignal {
    return this.abort.signal;
  }

  /** What a voice pipeline tells the session. */
  voiceHost(): VoiceHost {
    return {
      frame: (frame) => this.emit(frame),
      callerSaid: (text, turn) => {
        this.emit({ type: 'user_transcript', text, final: true });
        this.callerSaid(text, turn);
      },
      callerSpeechStarted: () => {
        this.emit({ type: 'speech_started' });
        this.touch();
      },
      callerInterrupted: () => {
        if (this.voice?.speaking) this.bargeIn();
      },
      callerSpeculating: (text) => this.speculate(text),
      callerSpeculationCancelled: () => this.dropSpeculation(),
      falseInterruption: () => {
        this.turnStats.falseInterruptions++;
        this.touch();
      },
      callerTurnEnded: (at) => {
        this.turnStartedAt = at;
      },
      callerTranscribed: (text) => {
        this.emit({ type: 'user_transcript', text, final: true });
        if (this.ending) return;
        this.touch();
        this.callerTurn(text);
      },
      runTools: async (calls) => {
        const host = this.toolHost();
        const results = await runToolCalls(host, calls);
        // end_call or a transfer that worked, asked for by the realtime model: the call ends as it said.
        const effect = results.find((r) => r.effect)?.effect;
        if (effect) host.apply(effect);
        return results;
      },
      firstAudio: (id, at) => this.firstAudio(id, at),
      played: (id, heard, interrupted) => this.played(id, heard, interrupted),
      failed: (failure) => void this.fail(failure),
    };
  }

  /** A `tool_answer` frame: the client's answer to one of this call's tool webhooks; refused (an error frame) when none waits for it. */
  toolAnswer(answer: ClientToolAnswer): void {
    if (this.ending) return;
    this.touch();
    if (!this.clientTools) return this.emit({ type: 'error', message: 'This call\'s tools are answered by their servers: start the call with "clientTools" to answer them' });
    if (!this.clientTools.answer(answer)) this.emit({ type: 'error', message: `No tool call ${answer.id.slice(0, 64)} is waiting for an answer` });
  }

  userMessage(text: string, endedAt = performance.now()): void {
    this.enqueue({ text, endedAt });
  }

  /** A spoken turn, confirmed over: answered with the speculative answer when it was begun on these very words. */
  private callerSaid(text: string, turn: CallerTurn): void {
    const held = this.speculation;
    this.speculation = null;
    // Begun on other words, or on a history that has changed since (a key pressed meanwhile): not this turn's answer.
    const fits = held?.answer.text === text && held.historyLength === this.messages.length;
    if (held && !fits) this.discard(held.answer);
    const speculation = fits ? held.answer : undefined;
    if (!this.enqueue({ text, endedAt: turn.endedAt, turn, ...(speculation ? { speculation } : {}) }) && speculation) this.discard(speculation);
  }

  /**
   * The caller's words so far read as a whole turn: the first round of its answer starts now,
   * held back until the turn is confirmed. Only when nothing else is being answered or waits:
   * the answer must be begun on the history it will be given with.
   */
  private speculate(text: string): void {
    if (this.ending || this.running || this.inbox.length || this.voice?.kind !== 'pipeline') return;
    this.dropSpeculation();
    const message: ChatCompletionMessageParam = { role: 'user', content: text };
    const answer = new Speculation(this.deps.llm, text, {
      messages: this.history([...this.messages, message]), tools: turnTools(this.toolHost()), settings: this.setup.settings, toolChoice: 'auto',
    }, this.abort.signal, () => this.timers.now());
    this.speculation = { answer, historyLength: this.messages.length };
    this.turnStats.speculativeStarts++;
  }

  private dropSpeculation(): void {
    const held = this.speculation;
    this.speculation = null;
    if (held) this.discard(held.answer);
  }

  private discard(answer: Speculation): void {
    answer.cancel();
    this.turnStats.speculativeDiscards++;
  }

  /**
   * The caller pressed a key (the SIP transport calls this for each RFC 4733 event or SIP INFO,
   * the WebSocket for each key of a `dtmf` frame). A key while the assistant speaks is a
   * barge-in; keys are gathered (src/calls/dtmf.ts) into one user turn. Not a keypad key: ignored.
   */
  dtmf(digit: string): void {
    if (this.ending || !this.keys.press(digit)) return;
    this.touch();
    if (this.voice?.speaking) this.bargeIn();
  }

  private keysGathered(keys: string): void {
    if (this.ending) return;
    this.emit({ type: 'dtmf', digits: keys });
    this.enqueue({ text: dtmfText(keys), endedAt: performance.now(), dtmf: keys });
  }

  /** Queues a user turn; false when it was refused (the call is ending, or too many wait). */
  private enqueue(turn: Inbound): boolean {
    if (this.ending) return false;
    this.touch();
    if (this.inbox.length >= MAX_WAITING) {
      this.emit({ type: 'error', message: 'Too many messages waiting; wait for the answer' });
      return false;
    }
    if (this.voice?.kind === 'realtime') {
      this.tell(this.voice, turn.text, turn.endedAt);
      return true;
    }
    this.inbox.push(turn);
    // A speech_to_speech call's model answers typed messages itself: those sent before it is ready wait for it (attachVoice).
    if (!this.running && this.setup.voice?.kind !== 'realtime') void this.drain();
    return true;
  }

  /** A typed message on a speech_to_speech call: a caller turn the model answers aloud (the caller may type over it). */
  private tell(voice: ConversingVoice, text: string, endedAt: number): void {
    if (!this.callerTurn(text)) return;
    if (voice.speaking) this.bargeIn();
    this.turnStartedAt = endedAt;
    voice.tell(text);
  }

  /** Records a caller turn, unless it is past the call's limits (which end it). */
  private callerTurn(text: string): boolean {
    if (this.overLimit(text)) return false;
    this.turns++;
    this.log({ role: 'user', text, at: this.now() });
    this.checkpoint();
    return true;
  }

  end(reason: EndReason, failure: CallFailure | null = null): Promise<void> {
    this.ending ??= this.finish(reason, failure);
    return this.ending;
  }

  /** A provider failed mid-call: say so in a frame, apologise aloud if the call still can, end with reason error. */
  async fail(failure: CallFailure): Promise<void> {
    if (this.ending) return;
    this.deps.log.warn({ callId: this.callId, failure }, 'call failed');
    this.emit({ type: 'error', message: `${failure.source} failed (${failure.statusCode ? `HTTP ${failure.statusCode}: ` : ''}${failure.message}); the call ends` });
    this.turnAbort.abort();
    if (this.voice) await this.voice.apologize(APOLOGY, failure).catch(() => undefined);
    await this.end('error', failure);
  }

  /** Says the greeting, if the call has one; answers its utterance on a voice call. */
  private greet(): Utterance | null {
    const { greeting } = this.setup;
    if (!greeting) return null;
    this.messages.push({ role: 'assistant', content: greeting });
    if (this.voice) {
      // A realtime model's own transcript of what it said becomes its assistant_message.
      if (this.voice.kind === 'pipeline') this.emit({ type: 'assistant_message', text: greeting });
      return this.utter('greeting', greeting, this.messages.at(-1));
    }
    this.say(greeting);
    this.checkpoint();
    return null;
  }

  /** The caller spoke over the assistant: the voice stops at once, the running turn stops after its tools. */
  private bargeIn(): void {
    this.turnAbort.abort();
    this.voice?.interrupt();
  }

  private async drain(): Promise<void> {
    this.running = true;
    try {
      await this.voiceReady;
      for (let next = this.inbox.shift(); next !== undefined && !this.ending; next = this.inbox.shift()) {
        const { speculation } = next;
        if (this.overLimit(next.text)) {
          if (speculation) this.discard(speculation);
          return;
        }
        this.turns++;
        this.deps.turnTaken?.(next.text);
        this.turnStartedAt = next.endedAt;
        this.turnAbort = new AbortController();
        const audio = next.turn?.audio;
        this.log(next.dtmf ? { role: 'dtmf', text: next.dtmf, at: this.now() }
          : { role: 'user', text: next.text, at: this.now(), ...(audio ? { startMs: Math.max(0, Math.round(audio.startMs)), endMs: Math.max(0, Math.round(audio.endMs)) } : {}) });
        this.messages.push({ role: 'user', content: next.text });
        this.answeringTurn = next.turn ? { turn: next.turn, firstTokenAt: speculation?.firstTokenAt ?? null } : null;
        await runTurn(this.turnHost(), speculation ? (onDelta, signal) => speculation.adopt(onDelta, signal) : undefined);
        this.answering?.write.end();
        this.answering = null;
        this.touch();
        this.checkpoint();
        // Clients that send one message at a time (parley chat reading a script) wait for this.
        this.emit({ type: 'turn_done' });
      }
    } catch (err) {
      if (!this.abort.signal.aborted) {
        const failure = describeLlmFailure(err);
        this.deps.log.warn({ callId: this.callId, failure }, 'LLM request failed; ending the call');
        this.emit({ type: 'error', message: `The language model failed (${failure.statusCode ? `HTTP ${failure.statusCode}: ` : ''}${failure.message}); the call ends` });
        void this.end('error', failure);
      }
    } finally {
      this.running = false;
    }
  }

  /** A user turn past the turn or transcript limit ends the call (saying so) instead of being taken. */
  private overLimit(text: string): boolean {
    const { maxTurns, maxTranscriptBytes } = this.deps.limits;
    if (this.turns < maxTurns && this.transcriptBytes + utf8(text) <= maxTranscriptBytes) return false;
    const limit = this.turns >= maxTurns ? `${maxTurns} turns` : `${Math.round(maxTranscriptBytes / 1024)} KiB of transcript`;
    this.emit({ type: 'error', message: `This call has reached its limit of ${limit}; it ends` });
    void this.end('limit_reached');
    return true;
  }

  private toolHost(): ToolHost {
    return {
      send: this.deps.send,
      clientTools: this.clientTools,
      tools: this.setup.tools,
      controls: this.setup.controls,
      control: this.transport?.control,
      speak: (text) => this.announce(text),
      apply: (effect) => void this.end(effect.end),
      toolContext: {
        callId: this.callId, traceId: this.setup.traceId, clock: this.deps.clock, signal: this.abort.signal,
        transport: this.transport?.info ?? { type: 'websocket' },
      },
      emit: (frame) => this.emit(frame),
      recordTool: (call, result) => this.recordTool(call, result),
      toolsSlow: (names, elapsedMs) => {
        this.emit({ type: 'tool_waiting', names, elapsedMs });
        // A realtime model says what it wants while its tools run; the frame tells the client why it is quiet.
        if (this.voice?.kind === 'pipeline' && !this.voice.speaking) this.utter('filler', TOOL_FILLER);
      },
    };
  }

  private turnHost(): TurnHost {
    return {
      ...this.toolHost(),
      llm: this.deps.llm,
      settings: this.setup.settings,
      turnSignal: AbortSignal.any([this.abort.signal, this.turnAbort.signal]),
      history: () => this.history(this.messages),
      remember: (message) => {
        this.messages.push(message);
        if (message.role !== 'assistant' || !this.answering) return;
        // The assistant text a voice round spoke: kept so that a barge-in can cut it to what was heard.
        this.answering.utterance.message = message;
        if (message.tool_calls) this.answering = null;
      },
      delta: (text) => {
        if (this.answeringTurn) this.answeringTurn.firstTokenAt ??= this.timers.now();
        this.emit({ type: 'assistant_delta', text });
        if (this.voice?.kind !== 'pipeline') return;
        if (!this.answering) {
          const utterance = this.track('answer');
          this.answering = { utterance, write: this.voice.begin(utterance.id) };
        }
        this.answering.utterance.text += text;
        this.answering.write.delta(text);
      },
      say: (text) => {
        if (!this.voice) return this.say(text);
        this.emit({ type: 'assistant_message', text });
        this.answering?.write.end();
      },
    };
  }

  /** The messages an LLM round is sent: the system prompt and a window of `messages`. */
  private history(messages: readonly ChatCompletionMessageParam[]): ChatCompletionMessageParam[] {
    const conversation = historyWindow(messages, this.deps.limits.historyMessages);
    return this.setup.systemPrompt ? [{ role: 'system', content: this.setup.systemPrompt }, ...conversation] : conversation;
  }

  /** Voice: a new utterance, tracked until the voice says it is over. */
  private track(kind: UtteranceKind, message?: ChatCompletionMessageParam): Utterance {
    const utterance = new Utterance(`u${++this.utteranceCount}`, kind, message);
    this.utterances.set(utterance.id, utterance);
    return utterance;
  }

  /** Voice: an utterance that is whole already (the greeting, a filler, an announcement). */
  private utter(kind: UtteranceKind, text: string, message?: ChatCompletionMessageParam): Utterance {
    const utterance = this.track(kind, message);
    utterance.text = text;
    this.voice?.say(utterance.id, text);
    return utterance;
  }

  /** A whole sentence outside the LLM's stream (end_call, transfer_call); resolves once it went out, or was cut. */
  private announce(text: string): Promise<void> {
    if (this.ending) return Promise.resolve();
    if (!this.voice) return Promise.resolve(this.say(text));
    this.emit({ type: 'assistant_message', text });
    return this.utter('announcement', text).done;
  }

  /** Voice: an utterance is over; the transcript and the history keep what the caller heard. */
  private played(id: string, heard: string, interrupted: boolean): void {
    const utterance = this.utterances.get(id);
    this.utterances.delete(id);
    // Its last frame was just sent, or it was cut just now: its audio ends there (a cut, not after now).
    if (utterance && this.timeline && utterance.startMs !== undefined) {
      utterance.endMs = interrupted ? Math.min(this.timeline.playEnd, this.timeline.now()) : this.timeline.playEnd;
    }
    utterance?.end(heard, interrupted);
    const message = utterance?.message;
    if (interrupted) {
      this.emit({ type: 'interrupted', heard });
      // The model is told what the caller heard, and that it was cut there: it answers what the caller said, not repeating itself.
      const cut = heard ? `${heard} ${INTERRUPTED_MARK}` : null;
      if (message && (heard || (message.role === 'assistant' && message.tool_calls))) message.content = cut;
      else if (message) this.messages.splice(this.messages.indexOf(message), 1); // nothing of it was heard
      else if (heard && utterance && this.answering?.utterance === utterance) this.messages.push({ role: 'assistant', content: cut });
    }
    if (!heard) return;
    const entry: TranscriptEntry = { role: 'assistant', text: heard, at: this.now() };
    if (utterance?.latencyMs !== undefined) entry.latencyMs = utterance.latencyMs;
    if (utterance?.latency) entry.latency = utterance.latency;
    if (utterance?.endpointing) entry.endpointing = utterance.endpointing;
    if (interrupted) entry.interrupted = true;
    if (utterance?.startMs !== undefined && utterance.endMs !== undefined) {
      entry.startMs = Math.max(0, Math.round(utterance.startMs));
      entry.endMs = Math.round(Math.max(utterance.startMs, utterance.endMs));
    }
    this.log(entry);
    this.checkpoint();
  }

  /** The first audio frame of an utterance: the latency of the turn, when it is the turn's first output. */
  private firstAudio(id: string, at: number): void {
    // A realtime model's answers are its own: first seen here.
    let utterance = this.utterances.get(id);
    if (!utterance) this.utterances.set(id, (utterance = new Utterance(id, 'answer')));
    // Its first frame was just sent: where it plays is where the timeline put the last frame.
    if (this.timeline?.lastFrameAt !== null && this.timeline?.lastFrameAt !== undefined) utterance.startMs ??= this.timeline.lastFrameAt;
    if (this.turnStartedAt === null) return;
    utterance.latencyMs = Math.round(at - this.turnStartedAt);
    this.turnStartedAt = null;
    const answering = this.answeringTurn;
    this.answeringTurn = null;
    if (!answering) return;
    utterance.latency = turnLatency({ ...answering.turn, firstTokenAt: answering.firstTokenAt, firstAudioAt: at });
    utterance.endpointing = answering.turn.endpointing;
  }

  private recordTool(call: ToolCallRequest, result: DispatchResult): void {
    const { ok, statusCode, latencyMs, outcome, type } = result;
    const invocation: ToolInvocation = { id: call.id, name: call.name, arguments: result.parameters, ok, statusCode, latencyMs, outcome, at: this.now() };
    // A control tool's result is our own words (never a tool server's body): the record keeps it.
    if (type) Object.assign(invocation, { type, result: result.content });
    this.toolInvocations.push(invocation);
    this.pending.push({ kind: 'tool', invocation });
    if (!ok) {
      this.deps.log.warn({ callId: this.callId, tool: call.name, outcome, statusCode, latencyMs, detail: result.detail }, 'tool call failed');
    }
  }

  /** Text calls: a complete assistant utterance, sent and kept at once. */
  private say(text: string): void {
    const entry: TranscriptEntry = { role: 'assistant', text, at: this.now() };
    if (this.turnStartedAt !== null) {
      entry.latencyMs = Math.round(performance.now() - this.turnStartedAt);
      this.turnStartedAt = null;
    }
    this.log(entry);
    this.emit({ type: 'assistant_message', text });
  }

  /** Keeps an utterance in the transcript and queues it for the record. */
  private log(entry: TranscriptEntry): void {
    this.transcript.push(entry);
    this.transcriptBytes += utf8(entry.text);
    this.pending.push({ kind: 'utterance', entry });
  }

  private emit(frame: ServerFrame): void {
    if (!this.ending || frame.type === 'call_ended') this.transport?.send(frame);
  }

  private now(): string {
    return this.deps.clock.now().toISOString();
  }

  private touch(): void {
    if (this.ending) return;
    this.timers.clearTimer(this.idleTimer);
    this.idleTimer = this.timers.setTimer(this.deps.limits.idleMs, () => void this.end('idle_timeout'), { unref: true });
  }

  /** Appends what the call said since the last checkpoint; writes are chained so they land in order. */
  private checkpoint(): void {
    if (!this.pending.length) return;
    const entries = this.pending.splice(0);
    this.saving = this.saving
      .then(() => this.deps.recorder.append(entries))
      .catch((err: unknown) => this.deps.log.error({ err, callId: this.callId }, 'could not save the call transcript'));
  }

  private async finish(reason: EndReason, failure: CallFailure | null): Promise<void> {
    this.timers.clearTimer(this.idleTimer);
    this.timers.clearTimer(this.maxTimer);
    this.keys.close();
    // Audio still going out when the call ends (the caller hung up as the last words played) is
    // cut there: what went out is recorded as heard, like a barge-in, before the voice closes.
    if (this.voice?.speaking) this.voice.interrupt();
    this.dropSpeculation();
    this.abort.abort();
    this.markVoiceReady();
    await this.voice?.close().catch(() => undefined);
    // Whatever the voice never reported over (it closed first) is over now: announcements stop waiting.
    for (const utterance of this.utterances.values()) utterance.end('', true);
    this.utterances.clear();
    this.checkpoint();
    await this.saving;
    const outcome = outcomeOf(reason, this.transcript.some((e) => e.role !== 'assistant'));
    try {
      const turnStats = this.voice?.kind === 'pipeline' ? { turnStats: { ...this.turnStats } } : {};
      await this.deps.recorder.finish({ reason, outcome, failure, transcript: this.transcript, toolInvocations: this.toolInvocations, ...turnStats });
    } catch (err) {
      this.deps.log.error({ err, callId: this.callId }, 'could not record the end of the call');
    }
    this.emit({ type: 'call_ended', reason });
    this.transport?.close();
    this.markDone();
  }
}
