import WebSocket, { type RawData } from 'ws';
import { PIPELINE_RATE } from '../audio/format.ts';
import { samplesToBytes } from '../audio/pcm.ts';
import type { DeepgramSettings } from './deepgram.ts';
import { SttError, errorCode, type SttSession } from './stt.ts';

/** Seconds of audio a final result may fall short of the audio sent and still count as covering it. */
const COVERAGE_SLACK = 0.02;

/** The fields of Deepgram's `Results` message that are used. */
interface Result {
  type?: string;
  start?: number;
  duration?: number;
  is_final?: boolean;
  /** Deepgram's own endpointing heard the speech end (after `endpointing` ms of silence). */
  speech_final?: boolean;
  from_finalize?: boolean;
  channel?: { alternatives?: { transcript?: string }[] };
}

interface Pending {
  audioEnd: number;
  resolve(text: string): void;
  reject(err: SttError): void;
  timer: NodeJS.Timeout;
}

/** One call's open socket to Deepgram: utterance audio out, results in (see deepgram.ts). */
export class DeepgramSession implements SttSession {
  onInterim?: (text: string) => void;
  onSpeechFinal?: () => void;
  onError?: (error: SttError) => void;
  private sent = 0; // seconds of audio sent on this socket: Deepgram's result times count the same way
  private answeredUpTo = 0; // the audio end of the last utterance answered
  private utteranceHasAudio = false;
  private finals: string[] = [];
  private finalEnd = 0; // where the last final result ended
  private pending: Pending | null = null;
  private failure: SttError | null = null;
  private closing: Promise<void> | null = null;
  private readonly keepAlive: NodeJS.Timeout;
  private readonly onAbort = () => void this.close();

  constructor(
    private readonly ws: WebSocket,
    private readonly closed: Promise<void>,
    private readonly settings: DeepgramSettings,
    private readonly signal: AbortSignal,
  ) {
    this.keepAlive = setTimeout(() => this.sendKeepAlive(), settings.keepAliveMs);
    ws.on('message', (data, isBinary) => {
      if (!isBinary) this.onMessage(textOf(data));
    });
    ws.on('error', (err: NodeJS.ErrnoException) => this.fail(`Deepgram connection failed: ${err.code ?? 'socket error'}`));
    ws.on('close', (code, reason) => {
      clearTimeout(this.keepAlive);
      const text = errorCode(reason.toString()) ?? '';
      this.fail(`Deepgram closed the connection (${code}${text ? ` ${text}` : ''})`);
    });
    if (signal.aborted) this.onAbort();
    else signal.addEventListener('abort', this.onAbort, { once: true });
  }

  write(pcm16k: Int16Array): void {
    if (this.closing || this.failure || pcm16k.length === 0) return;
    this.utteranceHasAudio = true;
    this.ws.send(samplesToBytes(pcm16k));
    this.sent += pcm16k.length / PIPELINE_RATE;
    this.keepAlive.refresh();
  }

  endUtterance(): Promise<string> {
    if (this.failure) return Promise.reject(this.failure);
    if (this.closing) return Promise.reject(new SttError('deepgram', 'the Deepgram session is closed'));
    if (this.pending) return Promise.reject(new SttError('deepgram', 'endUtterance is already waiting'));
    if (!this.utteranceHasAudio) return Promise.resolve('');
    this.utteranceHasAudio = false;
    const audioEnd = this.sent;
    // Deepgram may have finalized all of it already (its endpointing): nothing to wait for.
    if (this.finalEnd >= audioEnd - COVERAGE_SLACK) return Promise.resolve(this.takeText(audioEnd));
    this.ws.send(JSON.stringify({ type: 'Finalize' }));
    return new Promise<string>((resolve, reject) => {
      // Deepgram does not promise a from_finalize answer when little audio was left: then the finals so far are the text.
      const timer = setTimeout(() => this.settle(), this.settings.finalizeTimeoutMs);
      this.pending = { audioEnd, resolve, reject, timer };
    });
  }

  close(): Promise<void> {
    this.closing ??= (async () => {
      this.signal.removeEventListener('abort', this.onAbort);
      clearTimeout(this.keepAlive);
      this.failPending(new SttError('deepgram', 'the Deepgram session was closed'));
      if (this.ws.readyState === WebSocket.OPEN) this.ws.send(JSON.stringify({ type: 'CloseStream' }));
      const cut = setTimeout(() => this.ws.terminate(), this.settings.closeTimeoutMs);
      if (this.ws.readyState !== WebSocket.CLOSED) await this.closed;
      clearTimeout(cut);
    })();
    return this.closing;
  }

  private onMessage(text: string): void {
    let message: Result;
    try {
      message = JSON.parse(text) as Result;
    } catch {
      return;
    }
    if (message.type !== 'Results') return;
    const transcript = message.channel?.alternatives?.[0]?.transcript?.trim() ?? '';
    const end = (message.start ?? 0) + (message.duration ?? 0);
    // A late result for an utterance already answered (after a finalize timeout) is not this one's.
    if (end <= this.answeredUpTo + COVERAGE_SLACK) return;
    if (!message.is_final) {
      if (transcript) this.onInterim?.([...this.finals, transcript].join(' '));
      return;
    }
    this.finalEnd = Math.max(this.finalEnd, end);
    if (transcript) this.finals.push(transcript);
    if (message.speech_final && transcript) this.onSpeechFinal?.();
    if (this.pending && (message.from_finalize || this.finalEnd >= this.pending.audioEnd - COVERAGE_SLACK)) this.settle();
    else if (transcript) this.onInterim?.(this.finals.join(' '));
  }

  private settle(): void {
    const pending = this.pending;
    if (!pending) return;
    this.pending = null;
    clearTimeout(pending.timer);
    pending.resolve(this.takeText(pending.audioEnd));
  }

  private takeText(audioEnd: number): string {
    const text = this.finals.join(' ');
    this.finals = [];
    this.answeredUpTo = audioEnd;
    return text;
  }

  private sendKeepAlive(): void {
    if (this.ws.readyState !== WebSocket.OPEN) return;
    this.ws.send(JSON.stringify({ type: 'KeepAlive' }));
    this.keepAlive.refresh();
  }

  private fail(message: string): void {
    if (this.closing) return;
    const first = !this.failure;
    this.failure ??= new SttError('deepgram', message);
    this.failPending(this.failure);
    if (first) this.onError?.(this.failure);
  }

  private failPending(err: SttError): void {
    const pending = this.pending;
    if (!pending) return;
    this.pending = null;
    clearTimeout(pending.timer);
    pending.reject(err);
  }
}

function textOf(data: RawData): string {
  if (Buffer.isBuffer(data)) return data.toString('utf8');
  return Buffer.concat(Array.isArray(data) ? data : [Buffer.from(data)]).toString('utf8');
}
