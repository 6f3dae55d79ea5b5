import type { ChatCompletionMessageParam } from 'openai/resources/chat/completions';
import type { EndReason, ServerFrame } from './frames.ts';
import { describeLlmFailure } from './llm.ts';
import {
  outcomeOf, type CallFailure, type CallLogEntry, type CallSetup, type SessionDeps, type ToolInvocation, type TranscriptEntry,
} from './record.ts';
import type { ToolCallRequest, ToolCallResult } from './tool-call.ts';
import type { CallTransport } from './transports/transport.ts';
import { historyWindow, runTurn, type TurnHost } from './turn.ts';

const MAX_WAITING = 20;
const utf8 = (text: string) => Buffer.byteLength(text, 'utf8');

/**
 * One live call: the greeting, then one turn per user message (queued while a turn runs),
 * the idle, total, turn and transcript limits, and the record, appended as the call runs.
 * Ending is idempotent and aborts whatever runs.
 */
export class CallSession {
  readonly transcript: TranscriptEntry[] = [];
  readonly toolInvocations: ToolInvocation[] = [];
  private readonly messages: ChatCompletionMessageParam[] = [];
  private readonly inbox: string[] = [];
  private readonly pending: CallLogEntry[] = [];
  private readonly abort = new AbortController();
  private transport: CallTransport | null = null;
  private running = false;
  private turns = 0;
  private transcriptBytes = 0;
  /** performance.now() when the current turn's user message arrived, until its first output. */
  private turnStartedAt: number | null = null;
  private ending: Promise<void> | null = null;
  private saving: Promise<void> = Promise.resolve();
  private idleTimer: NodeJS.Timeout | undefined;
  private maxTimer: NodeJS.Timeout | undefined;
  private markDone: () => void = () => {};
  /** Settles once the call has ended and its record is written. */
  readonly done = new Promise<void>((resolve) => (this.markDone = resolve));

  constructor(
    private readonly setup: CallSetup,
    private readonly deps: SessionDeps,
  ) {}

  get callId(): string {
    return this.setup.callId;
  }

  start(transport: CallTransport): void {
    this.transport = transport;
    const { unfilled } = this.setup;
    this.emit({ type: 'call_started', callId: this.setup.callId, ...(unfilled.length ? { unfilledPlaceholders: unfilled } : {}) });
    if (this.setup.greeting) {
      this.messages.push({ role: 'assistant', content: this.setup.greeting });
      this.say(this.setup.greeting);
      this.checkpoint();
    }
    this.maxTimer = setTimeout(() => void this.end('max_duration'), this.deps.limits.maxMs).unref();
    this.touch();
  }

  userMessage(text: string): void {
    if (this.ending) return;
    this.touch();
    if (this.inbox.length >= MAX_WAITING) return this.emit({ type: 'error', message: 'Too many messages waiting; wait for the answer' });
    this.inbox.push(text);
    if (!this.running) void this.drain();
  }

  end(reason: EndReason, failure: CallFailure | null = null): Promise<void> {
    this.ending ??= this.finish(reason, failure);
    return this.ending;
  }

  private async drain(): Promise<void> {
    this.running = true;
    try {
      for (let text = this.inbox.shift(); text !== undefined && !this.ending; text = this.inbox.shift()) {
        const { maxTurns, maxTranscriptBytes } = this.deps.limits;
        if (this.turns >= maxTurns || this.transcriptBytes + utf8(text) > maxTranscriptBytes) {
          const limit = this.turns >= maxTurns ? `${maxTurns} turns` : `${Math.round(maxTranscriptBytes / 1024)} KiB of transcript`;
          this.emit({ type: 'error', message: `This call has reached its limit of ${limit}; it ends` });
          void this.end('limit_reached');
          return;
        }
        this.turns++;
        this.turnStartedAt = performance.now();
        this.log({ role: 'user', text, at: this.now() });
        this.messages.push({ role: 'user', content: text });
        await runTurn(this.turnHost());
        this.touch();
        this.checkpoint();
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

  private turnHost(): TurnHost {
    return {
      llm: this.deps.llm,
      send: this.deps.send,
      settings: this.setup.settings,
      tools: this.setup.tools,
      toolContext: {
        callId: this.callId, traceId: this.setup.traceId, clock: this.deps.clock, signal: this.abort.signal,
        transport: this.transport?.info ?? { type: 'websocket' },
      },
      history: () => {
        const conversation = historyWindow(this.messages, this.deps.limits.historyMessages);
        return this.setup.systemPrompt ? [{ role: 'system', content: this.setup.systemPrompt }, ...conversation] : conversation;
      },
      remember: (message) => this.messages.push(message),
      emit: (frame) => this.emit(frame),
      delta: (text) => this.emit({ type: 'assistant_delta', text }),
      say: (text) => this.say(text),
      recordTool: (call, result) => this.recordTool(call, result),
    };
  }

  private recordTool(call: ToolCallRequest, result: ToolCallResult): void {
    const { ok, statusCode, latencyMs, outcome } = result;
    const invocation: ToolInvocation = { id: call.id, name: call.name, arguments: result.parameters, ok, statusCode, latencyMs, outcome, at: this.now() };
    this.toolInvocations.push(invocation);
    this.pending.push({ kind: 'tool', invocation });
    if (!ok) {
      this.deps.log.warn({ callId: this.callId, tool: call.name, outcome, statusCode, latencyMs, detail: result.detail }, 'tool call failed');
    }
  }

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
    clearTimeout(this.idleTimer);
    this.idleTimer = setTimeout(() => void this.end('idle_timeout'), this.deps.limits.idleMs).unref();
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
    clearTimeout(this.idleTimer);
    clearTimeout(this.maxTimer);
    this.abort.abort();
    this.checkpoint();
    await this.saving;
    const outcome = outcomeOf(reason, this.transcript.some((e) => e.role === 'user'));
    try {
      await this.deps.recorder.finish({ reason, outcome, failure, transcript: this.transcript, toolInvocations: this.toolInvocations });
    } catch (err) {
      this.deps.log.error({ err, callId: this.callId }, 'could not record the end of the call');
    }
    this.emit({ type: 'call_ended', reason });
    this.transport?.close();
    this.markDone();
  }
}
