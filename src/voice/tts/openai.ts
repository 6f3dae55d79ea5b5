import { Agent, request } from 'undici';
import { Pcm16Assembler } from './pcm.ts';
import { scrubSecrets, TtsError, type TtsChunk, type TtsOptions, type TtsProvider, type TtsSession } from './types.ts';

/**
 * OpenAI's `POST {base}/audio/speech`, streamed, or any server that speaks it (local servers such
 * as Kokoro-FastAPI or openedai-speech take no key). `response_format: "pcm"` is raw 24 kHz
 * PCM16LE, so audio is passed on as it arrives. Each session has its own keep-alive agent: the
 * connection is reused sentence after sentence and closed with the session.
 */
export const DEFAULT_OPENAI_BASE_URL = 'https://api.openai.com/v1';
export const DEFAULT_OPENAI_TTS_MODEL = 'gpt-4o-mini-tts';
export const DEFAULT_OPENAI_VOICE = 'alloy';
const SAMPLE_RATE = 24000;

export interface OpenAiSpeechBody {
  model: string;
  voice: string;
  input: string;
  response_format: 'pcm';
  speed?: number;
}

export function openAiSpeechBody(text: string, voice: TtsOptions['voice']): OpenAiSpeechBody {
  return {
    model: voice.modelId ?? DEFAULT_OPENAI_TTS_MODEL,
    voice: voice.voiceId ?? DEFAULT_OPENAI_VOICE,
    input: text.trim(),
    response_format: 'pcm',
    // OpenAI accepts 0.25..4, the same range as the strategy's.
    ...(voice.speed !== undefined ? { speed: Math.min(4, Math.max(0.25, voice.speed)) } : {}),
  };
}

class OpenAiSpeechSession implements TtsSession {
  readonly provider = 'openai';
  private readonly agent: Agent;
  private readonly url: string;
  private closed = false;

  constructor(private readonly options: TtsOptions) {
    this.url = `${options.baseUrl.replace(/\/+$/, '')}/audio/speech`;
    this.agent = new Agent({ keepAliveTimeout: 30_000, connect: { timeout: 10_000, ...(options.lookup ? { lookup: options.lookup } : {}) } });
  }

  async *synthesize(text: string, signal: AbortSignal): AsyncIterable<TtsChunk> {
    if (signal.aborted || text.trim() === '') return;
    if (this.closed) throw new TtsError(this.provider, 'session closed');
    let body: AsyncIterable<Buffer> & { destroy(): void };
    try {
      const res = await request(this.url, {
        method: 'POST',
        dispatcher: this.agent,
        signal,
        headers: {
          'content-type': 'application/json',
          ...(this.options.apiKey ? { authorization: `Bearer ${this.options.apiKey}` } : {}),
        },
        body: JSON.stringify(openAiSpeechBody(text, this.options.voice)),
        headersTimeout: 30_000,
        bodyTimeout: 30_000,
      });
      if (res.statusCode !== 200) {
        const detail = scrubSecrets(await errorDetail(res.body), this.options.apiKey);
        throw new TtsError(this.provider, `HTTP ${res.statusCode}${detail ? `: ${detail}` : ''}`, res.statusCode);
      }
      body = res.body;
    } catch (error) {
      if (signal.aborted) return;
      throw asTtsError(error);
    }
    const assembler = new Pcm16Assembler();
    try {
      for await (const bytes of body) {
        if (signal.aborted) return;
        const pcm = assembler.push(bytes);
        if (pcm.length > 0) yield { pcm, sampleRate: SAMPLE_RATE };
      }
    } catch (error) {
      if (signal.aborted) return;
      throw asTtsError(error);
    } finally {
      body.destroy();
    }
  }

  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    await this.agent.destroy();
  }
}

/** The provider's error text, which never echoes the request's headers. */
async function errorDetail(body: AsyncIterable<Buffer>): Promise<string> {
  let text = '';
  try {
    for await (const chunk of body) {
      text += String(chunk);
      if (text.length > 2000) break;
    }
    const parsed = JSON.parse(text) as { error?: { message?: unknown } };
    if (typeof parsed.error?.message === 'string') return parsed.error.message.slice(0, 300);
  } catch {
    // not JSON: the status says enough
  }
  return '';
}

function asTtsError(error: unknown): TtsError {
  if (error instanceof TtsError) return error;
  const message = error instanceof Error ? error.message : String(error);
  return new TtsError('openai', `request failed: ${message}`);
}

export const openAiTts: TtsProvider = {
  name: 'openai',
  open: async (options: TtsOptions): Promise<TtsSession> => new OpenAiSpeechSession(options),
};
