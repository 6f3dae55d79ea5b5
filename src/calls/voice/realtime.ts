import { createDecoder, type AudioDecoder } from '../../voice/audio/format.ts';
import type { Pacer } from '../../voice/pacer.ts';
import type { OpenAiRealtimeClient, RealtimeError } from '../../voice/realtime/openai.ts';
import { REALTIME_SAMPLE_RATE } from '../../voice/realtime/session-config.ts';
import type { TtsSession } from '../../voice/tts/index.ts';
import type { CallFailure } from '../failure.ts';
import type { Log } from '../record.ts';
import { speakApology } from './apology.ts';
import type { AudioLink } from './link.ts';
import { heardMs, VoiceOutput } from './output.ts';
import { providerFailure } from './pipeline.ts';
import { RealtimeAnswers, type Answer } from './realtime-answers.ts';
import type { Speaker } from './speaker.ts';
import type { ConversingVoice, VoiceHost } from './voice.ts';

/** What a realtime failure is recorded as. */
export const REALTIME_SOURCE = 'realtime:openai';

export interface RealtimeParts {
  link: AudioLink;
  pacer: Pacer;
  /** Opens the model's session as the plan says; `signal` abandons the attempt. */
  connect(signal: AbortSignal): Promise<OpenAiRealtimeClient>;
  /** The local voice (eSpeak) of the apology: the model cannot apologise for itself failing. */
  fallbackTts(): Promise<TtsSession>;
  log: Log;
}

/** A Realtime model speaks what it generates, so a text to be said as it is (the greeting) is asked for in so many words. */
export const verbatim = (text: string) => `Say exactly the following words, word for word, and nothing else:\n${text}`;

/**
 * The speech_to_speech voice of a call: the caller's audio goes to an OpenAI Realtime model
 * (converted to 24 kHz PCM), whose server VAD takes the turns and whose spoken answers come back
 * as audio, converted to the link's format and paced in 20 ms frames like the pipeline's. The
 * session hears what happens (the caller's turns, the answers as heard, their latency) and runs
 * the model's tool calls; their results go back to the model, which then speaks about them.
 *
 * The model's session connects in the background (the greeting waits for it), so that a refused
 * connection (a wrong key) reaches the call as a failure once the voice is attached, and the
 * caller hears the apology in the local voice.
 */
export class RealtimeVoice implements ConversingVoice {
  readonly kind = 'realtime';
  private client: OpenAiRealtimeClient | null = null;
  private readonly connecting: Promise<void>;
  private readonly lifetime = new AbortController();
  private readonly decoder: AudioDecoder;
  private readonly output: VoiceOutput;
  private readonly answers: RealtimeAnswers;
  /** Caller turns begun so far: an answer to tool results is not asked for once the caller has spoken since. */
  private callerTurns = 0;
  private apology: Speaker | null = null;
  private readonly opened: TtsSession[] = [];
  private closed = false;

  constructor(private readonly parts: RealtimeParts, private readonly host: VoiceHost, signal: AbortSignal) {
    this.decoder = createDecoder(parts.link.format, REALTIME_SAMPLE_RATE);
    this.output = new VoiceOutput(parts.link, parts.pacer, {
      firstFrame: (tag, at) => {
        const answer = this.answers.byItem(tag);
        if (answer) host.firstAudio(answer.id, at);
      },
      played: (tag) => this.answers.played(tag),
    });
    this.answers = new RealtimeAnswers({
      played: (id, heard, interrupted) => host.played(id, heard, interrupted),
      end: (itemId) => this.output.end(itemId),
    });
    parts.link.onAudio((chunk) => this.hear(chunk));
    this.connecting = parts.connect(AbortSignal.any([signal, this.lifetime.signal])).then(
      (client) => this.use(client),
      (error: unknown) => {
        if (!this.closed) host.failed(providerFailure(REALTIME_SOURCE, error));
      },
    );
  }

  get speaking(): boolean {
    return this.answers.pending;
  }

  /** The greeting: asked of the model once it is connected, with no tools, to be said as written. */
  say(id: string, text: string): void {
    this.answers.expect(id);
    void this.connecting.then(() => this.client?.createResponse({ instructions: verbatim(text), toolChoice: 'none', metadata: { utterance: id } }));
  }

  /** A typed caller message: a turn of the caller's like a spoken one (a tool result arriving later asks for no second answer). */
  tell(text: string): void {
    this.callerTurns++;
    void this.connecting.then(() => this.client?.sendUserText(text));
  }

  /**
   * Barge-in: the audio stops at once, each answer cut is truncated on the server to what the
   * caller heard (so the model does not believe it said the rest), and a response still running
   * is cancelled.
   */
  interrupt(): void {
    const cut = heardMs(this.output.clear());
    const { cancel } = this.answers.interrupt((answer: Answer) => {
      const heard = Math.min(cut.get(answer.itemId)?.heardMs ?? 0, answer.receivedMs);
      // An answer heard to its end (its last frames still draining when the caller spoke) needs no truncate.
      if (answer.receivedMs > 0 && heard < answer.receivedMs) this.client?.truncate(answer.itemId, heard);
      return heard;
    });
    if (cancel) this.client?.cancelResponse();
    this.parts.link.flushPeer();
  }

  /** Stops the model, then says `text` in the local voice. */
  async apologize(text: string, _failure: CallFailure): Promise<void> {
    this.interrupt();
    this.output.close();
    await this.disconnect();
    const tts = await this.parts.fallbackTts();
    this.opened.push(tts);
    if (this.closed) return void (await tts.close()); // the call ended meanwhile (the caller hung up)
    const apology = speakApology(this.parts.link, this.parts.pacer, tts, text, this.host);
    this.apology = apology.speaker;
    await apology.done;
  }

  async close(): Promise<void> {
    this.closed = true;
    this.lifetime.abort();
    this.output.close();
    this.apology?.close();
    await this.connecting;
    await this.disconnect();
    await Promise.all(this.opened.map((s) => s.close()));
  }

  private use(client: OpenAiRealtimeClient): void {
    if (this.closed) return void client.close();
    this.client = client;
    client.on('responseCreated', ({ responseId, metadata }) => {
      // The greeting's response, begun after the caller had already spoken over it.
      if (this.answers.created(responseId, metadata.utterance)) client.cancelResponse();
    });
    client.on('audio', ({ responseId, itemId, pcm, sampleRate }) => {
      const answer = this.answers.answer(responseId, itemId);
      if (!answer) return;
      answer.receivedMs += (pcm.length / sampleRate) * 1000;
      this.output.write(itemId, pcm, sampleRate);
    });
    client.on('assistantTranscriptDelta', ({ responseId, itemId, delta }) => {
      const answer = this.answers.answer(responseId, itemId);
      if (!answer) return;
      answer.transcript += delta;
      this.host.frame({ type: 'assistant_delta', text: delta });
    });
    client.on('assistantTranscript', ({ responseId, itemId, text }) => {
      const answer = this.answers.answer(responseId, itemId);
      if (!answer) return;
      answer.transcript = text;
      this.host.frame({ type: 'assistant_message', text });
    });
    client.on('speechStarted', () => {
      this.callerTurns++;
      this.host.callerSpeechStarted();
      // The model's server VAD takes turns: any speech over its answer cuts it.
      this.host.callerInterrupted();
    });
    client.on('speechStopped', () => this.host.callerTurnEnded(this.parts.pacer.now()));
    client.on('userTranscript', ({ text }) => {
      if (text.trim()) this.host.callerTranscribed(text.trim());
    });
    client.on('toolCall', ({ responseId, callId, name, arguments: args }) => this.answers.toolCall(responseId, { id: callId, name, arguments: args }));
    client.on('responseDone', ({ responseId, status, error }) => {
      if (status === 'failed') {
        const why = [error?.type, error?.code].filter(Boolean).join(': ') || 'no reason given';
        return this.host.failed({ source: REALTIME_SOURCE, statusCode: null, message: `a response failed (${why})` });
      }
      const calls = this.answers.done(responseId, status);
      if (calls.length) void this.runTools(calls);
    });
    client.on('error', (error) => this.serverError(error));
    client.on('close', ({ code }) => this.host.failed({ source: REALTIME_SOURCE, statusCode: null, message: `the Realtime socket closed (code ${code})` }));
  }

  private hear(chunk: Buffer): void {
    if (!this.client || this.closed) return;
    const pcm = this.decoder.decode(chunk);
    if (pcm.length) this.client.appendAudio(pcm);
  }

  /** A response's tool calls go through the session's tool webhooks; their results back to the model, which then answers. */
  private async runTools(calls: { id: string; name: string; arguments: string }[]): Promise<void> {
    const turn = this.callerTurns;
    const results = await this.host.runTools(calls);
    const client = this.client;
    if (!client || this.closed) return;
    calls.forEach((call, i) => client.sendToolResult(call.id, results[i]?.content ?? '', false));
    // A caller who spoke meanwhile gets the server VAD's answer, which sees these results: asking for another would answer twice.
    if (this.callerTurns === turn) client.createResponse();
  }

  /** Most server errors leave the session usable; one saying it has ended ends the call. */
  private serverError(error: RealtimeError): void {
    if (error.code === 'response_cancel_not_active') return; // a barge-in raced the server's own cancellation
    if (error.code === 'session_expired') return this.host.failed(providerFailure(REALTIME_SOURCE, error));
    this.parts.log.warn({ code: error.code, message: error.message }, 'the Realtime model reported an error');
  }

  /** Closes the model's session; nothing it says from here on matters (its close is ours, not a failure). */
  private async disconnect(): Promise<void> {
    const client = this.client;
    this.client = null;
    client?.removeAllListeners();
    await client?.close();
  }
}
