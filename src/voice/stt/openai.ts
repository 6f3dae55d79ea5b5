import { Agent, FormData, request } from 'undici';
import { PIPELINE_RATE } from '../audio/format.ts';
import { concatSamples } from '../audio/pcm.ts';
import { writeWav } from '../audio/wav.ts';
import { SttError, errorCode, type SttOptions, type SttProvider, type SttSession } from './stt.ts';

export const OPENAI_STT_DEFAULT_MODEL = 'gpt-4o-mini-transcribe';

export interface OpenAiSttSettings {
  /** One transcription request, connect to last byte. */
  timeoutMs: number;
  /** Audio kept per utterance; the rest is not sent (the API takes files up to 25 MB). */
  maxUtteranceSeconds: number;
  /** The provider its errors name: `openai`, or `whisper` for a self-hosted server. */
  name: string;
}

export const OPENAI_STT_DEFAULTS: Readonly<OpenAiSttSettings> = Object.freeze({ timeoutMs: 30_000, maxUtteranceSeconds: 120, name: 'openai' });

/**
 * OpenAI's transcription endpoint, or any server that speaks it (faster-whisper-server,
 * speaches): one multipart POST of a WAV file per utterance, over undici on the session's own
 * keep-alive agent, so that close() leaves no socket behind. No interim hypotheses.
 */
export function createOpenAiStt(settings: Partial<OpenAiSttSettings> = {}): SttProvider {
  const s = { ...OPENAI_STT_DEFAULTS, ...settings };
  return { name: s.name, open: async (options) => new OpenAiSession(s, options) };
}

class OpenAiSession implements SttSession {
  private chunks: Int16Array[] = [];
  private samples = 0;
  /** The last preview: the text of the utterance's first `samples` samples. */
  private previewed: { samples: number; text: Promise<string> } | null = null;
  private closing: Promise<void> | null = null;
  private readonly agent: Agent;
  private readonly stop = new AbortController();
  private readonly onAbort = () => void this.close();
  private readonly maxSamples: number;

  constructor(
    private readonly settings: OpenAiSttSettings,
    private readonly options: SttOptions,
  ) {
    this.maxSamples = settings.maxUtteranceSeconds * PIPELINE_RATE;
    this.agent = new Agent({ keepAliveTimeout: 10_000, ...(options.lookup ? { connect: { lookup: options.lookup } } : {}) });
    if (options.signal.aborted) this.onAbort();
    else options.signal.addEventListener('abort', this.onAbort, { once: true });
  }

  write(pcm16k: Int16Array): void {
    if (this.closing) return;
    const room = this.maxSamples - this.samples;
    if (room <= 0) return;
    const chunk = pcm16k.length > room ? pcm16k.subarray(0, room) : pcm16k;
    this.chunks.push(chunk.slice()); // the caller may reuse its buffer before the utterance ends
    this.samples += chunk.length;
  }

  async endUtterance(): Promise<string> {
    if (this.closing) throw new SttError(this.settings.name, 'the transcription session is closed');
    const audio = concatSamples(this.chunks);
    const previewed = this.previewed;
    this.chunks = [];
    this.samples = 0;
    this.previewed = null;
    if (audio.length === 0) return '';
    // Nothing was said since the last preview: its text is the utterance's.
    if (previewed?.samples === audio.length) return previewed.text;
    return this.transcribe(audio);
  }

  /** The utterance so far, transcribed as a whole (the model reads it in context), kept for endUtterance. */
  async preview(): Promise<string> {
    if (this.closing) throw new SttError(this.settings.name, 'the transcription session is closed');
    if (this.samples === 0) return '';
    if (this.previewed?.samples === this.samples) return this.previewed.text;
    const text = this.transcribe(concatSamples(this.chunks));
    this.previewed = { samples: this.samples, text };
    text.catch(() => undefined);
    return text;
  }

  close(): Promise<void> {
    this.closing ??= (async () => {
      this.options.signal.removeEventListener('abort', this.onAbort);
      this.chunks = [];
      this.stop.abort();
      await this.agent.destroy();
    })();
    return this.closing;
  }

  private async transcribe(audio: Int16Array): Promise<string> {
    const { apiKey, baseUrl, model, language } = this.options;
    const form = new FormData();
    form.append('file', new Blob([writeWav(audio, PIPELINE_RATE)], { type: 'audio/wav' }), 'utterance.wav');
    form.append('model', model ?? OPENAI_STT_DEFAULT_MODEL);
    // The API takes ISO-639-1 ('en'); strategies may name a region too ('en-US').
    if (language) form.append('language', language.split('-')[0]!);
    form.append('response_format', 'json');
    // Our own timer rather than AbortSignal.timeout, whose timer would outlive close().
    const attempt = new AbortController();
    const timer = setTimeout(() => attempt.abort(), this.settings.timeoutMs);
    const onStop = () => attempt.abort();
    this.stop.signal.addEventListener('abort', onStop, { once: true });
    let statusCode: number;
    let body: string;
    try {
      const res = await request(`${baseUrl.replace(/\/+$/, '')}/audio/transcriptions`, {
        method: 'POST',
        body: form,
        headers: apiKey ? { authorization: `Bearer ${apiKey}` } : {},
        dispatcher: this.agent,
        signal: attempt.signal,
      });
      statusCode = res.statusCode;
      body = await res.body.text();
    } catch (err) {
      const reason = this.closing ? 'closed' : attempt.signal.aborted ? 'timed out' : (errorCode((err as NodeJS.ErrnoException).code) ?? 'network error');
      throw new SttError(this.settings.name, `transcription request failed: ${reason}`);
    } finally {
      clearTimeout(timer);
      this.stop.signal.removeEventListener('abort', onStop);
    }
    const answer = parse(body);
    if (statusCode < 200 || statusCode > 299) {
      const code = errorCode(answer?.error?.code) ?? errorCode(answer?.error?.type);
      throw new SttError(this.settings.name, `transcription refused: HTTP ${statusCode}${code ? ` ${code}` : ''}`, statusCode);
    }
    if (typeof answer?.text !== 'string') throw new SttError(this.settings.name, 'transcription answer without text', statusCode);
    return answer.text.trim();
  }
}

function parse(body: string): { text?: unknown; error?: { code?: unknown; type?: unknown } } | undefined {
  try {
    return JSON.parse(body) as ReturnType<typeof parse>;
  } catch {
    return undefined;
  }
}
