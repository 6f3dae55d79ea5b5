import type { ChatCompletionMessageParam } from 'openai/resources/chat/completions';
import type { EndReason, ServerFrame } from './frames.ts';
import { outcomeOf, type CallSetup, type CallState, type SessionDeps, type ToolInvocation, type TranscriptEntry } from './record.ts';
import type { ToolCallRequest, ToolCallResult } from './tool-call.ts';
import type { CallTransport } from './transports/transport.ts';
import { runTurn, type TurnHost } from './turn.ts';

const MAX_WAITING = 20;

/**
 * One live call: the greeting, then one turn per user message (queued while a turn runs),
 * the idle and total limits, and the record. Ending is idempotent and aborts whatever runs.
 */
export class CallSession implements CallState {
  readonly transcript: TranscriptEntry[] = [];
  readonly toolInvocations: ToolInvocation[] = [];
  private readonly messages: ChatCompletionMessageParam[] = [];
  private readonly inbox: string[] = [];
  private readonly abort = new AbortController();
  private transport: CallTransport | null = null;
  private running = false;
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
    if (this.setup.systemPrompt) this.messages.push({ role: 'system', content: this.setup.systemPrompt });
    this.emit({ type: 'call_started', callId: this.setup.callId });
    if (this.setup.greeting) {
      this.messages.push({ role: 'assistant', content: this.setup.greeting });
      this.say(this.setup.greeting);
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

  end(reason: EndReason): Promise<void> {
    this.ending ??= this.finish(reason);
    return this.ending;
  }

  private async drain(): Promise<void> {
    this.running = true;
    try {
      for (let text = this.inbox.shift(); text !== undefined && !this.ending; text = this.inbox.shift()) {
        this.transcript.push({ role: 'user', text, at: this.now() });
        this.messages.push({ role: 'user', content: text });
        await runTurn(this.turnHost());
        this.touch();
        this.checkpoint();
      }
    } catch (err) {
      if (!this.abort.signal.aborted) {
        const status = (err as { status?: unknown }).status;
        this.deps.log.warn({ callId: this.callId, error: err instanceof Error ? err.name : 'unknown', status }, 'LLM request failed; ending the call');
        this.emit({ type: 'error', message: 'The language model did not answer; the call ends' });
        void this.end('error');
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
      messages: this.messages,
      toolContext: {
        callId: this.callId, traceId: this.setup.traceId, clock: this.deps.clock, signal: this.abort.signal,
        transport: this.transport?.info ?? { type: 'websocket' },
      },
      emit: (frame) => this.emit(frame),
      say: (text) => this.say(text),
      recordTool: (call, result) => this.recordTool(call, result),
    };
  }

  private recordTool(call: ToolCallRequest, result: ToolCallResult): void {
    const { ok, statusCode, latencyMs, outcome } = result;
    this.toolInvocations.push({ id: call.id, name: call.name, arguments: result.parameters, ok, statusCode, latencyMs, outcome, at: this.now() });
    if (!ok) {
      this.deps.log.warn({ callId: this.callId, tool: call.name, outcome, statusCode, latencyMs, detail: result.detail }, 'tool call failed');
    }
  }

  private say(text: string): void {
    this.transcript.push({ role: 'assistant', text, at: this.now() });
    this.emit({ type: 'assistant_message', text });
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

  /** Writes are chained so they land in order; a failed one is logged and the call goes on. */
  private checkpoint(): void {
    this.saving = this.saving
      .then(() => this.deps.recorder.checkpoint(this))
      .catch((err: unknown) => this.deps.log.error({ err, callId: this.callId }, 'could not save the call transcript'));
  }

  private async finish(reason: EndReason): Promise<void> {
    clearTimeout(this.idleTimer);
    clearTimeout(this.maxTimer);
    this.abort.abort();
    await this.saving;
    const outcome = outcomeOf(reason, this.transcript.some((e) => e.role === 'user'));
    try {
      await this.deps.recorder.finish(this, reason, outcome);
    } catch (err) {
      this.deps.log.error({ err, callId: this.callId }, 'could not record the end of the call');
    }
    this.emit({ type: 'call_ended', reason });
    this.transport?.close();
    this.markDone();
  }
}
