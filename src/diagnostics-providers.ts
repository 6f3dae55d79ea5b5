import { platformAccess, platformLlm } from './calls/providers/access.ts';
import { deepgram } from './calls/providers/deepgram.ts';
import { openai } from './calls/providers/openai.ts';
import { whisper } from './calls/providers/whisper.ts';
import type { Config } from './config.ts';
import { probeLlm, type Check } from './diagnostics.ts';

/**
 * The providers a strategy that names none would use, as `parley doctor` and the start-up lines
 * report them: the LLM (the demo model when none is configured), the STT and the TTS.
 */

const DEMO_LLM_DETAIL =
  'the built-in demo model (neither OPENAI_BASE_URL nor OPENAI_API_KEY is set): calls get rule-based answers and tool calls, and are told so once; ' +
  'set OPENAI_BASE_URL (Ollama or another OpenAI-compatible server) or OPENAI_API_KEY for a real model';

/** What a voice call needs to be heard, in the words of the refusal (src/calls/voice/plan-for.ts says the same to the caller). */
const STT_OPTIONS =
  'set DEEPGRAM_API_KEY (a Deepgram key), OPENAI_API_KEY (an OpenAI key), or WHISPER_BASE_URL (a self-hosted Whisper-compatible server\'s base URL, ' +
  'no key needed), or store a deepgram, openai or whisper provider credential in the organization';

export async function llmCheck(config: Config, timeoutMs: number): Promise<Check> {
  const platform = platformLlm(config);
  if (platform.provider.name === 'demo') return { name: 'llm', status: 'warn', detail: DEMO_LLM_DETAIL };
  return probeLlm({ ...platform, defaultModel: config.llmDefaultModel, timeoutMs });
}

/**
 * The transcriber of a strategy that names none, from the platform's variables, in the order
 * calls choose it (src/calls/voice/plan-for.ts): WHISPER_BASE_URL (probed), OpenAI's (with
 * OPENAI_API_KEY), a keyless OPENAI_BASE_URL (probed: an LLM-only server such as Ollama has no
 * POST /audio/transcriptions), else Deepgram's; nothing at all fails, naming the options.
 */
export async function sttCheck(config: Config, timeoutMs: number): Promise<Check> {
  const own = platformAccess(config, whisper);
  if (own.baseUrl) return probeTranscriptions('WHISPER_BASE_URL', own.baseUrl, own.apiKey, timeoutMs);
  const open = platformAccess(config, openai);
  const base = (open.baseUrl ?? openai.defaultBaseUrl).replace(/\/+$/, '');
  if (open.apiKey) return { name: 'stt', status: 'ok', detail: `openai transcription at ${base} with OPENAI_API_KEY, for strategies naming no transcriber` };
  if (open.baseUrl) return probeTranscriptions('OPENAI_BASE_URL', open.baseUrl, null, timeoutMs);
  if (platformAccess(config, deepgram).apiKey) return { name: 'stt', status: 'ok', detail: 'deepgram with DEEPGRAM_API_KEY, for strategies naming no transcriber' };
  return { name: 'stt', status: 'fail', detail: `none: voice calls of strategies naming no transcriber are refused at start (text calls work); ${STT_OPTIONS}` };
}

/** Asks for a transcription without audio: a server that transcribes says the file is missing (400, 422); one that does not answers 404. */
async function probeTranscriptions(variable: string, baseUrl: string, apiKey: string | null, timeoutMs: number): Promise<Check> {
  const base = baseUrl.replace(/\/+$/, '');
  const form = new FormData();
  form.append('model', 'whisper-1');
  const where = `${variable} ${base} (${apiKey ? 'with WHISPER_API_KEY' : 'no key'})`;
  try {
    const res = await fetch(`${base}/audio/transcriptions`, {
      method: 'POST', body: form, headers: apiKey ? { authorization: `Bearer ${apiKey}` } : {}, signal: AbortSignal.timeout(timeoutMs),
    });
    await res.arrayBuffer().catch(() => undefined);
    if (res.status === 401 || res.status === 403) return { name: 'stt', status: 'fail', detail: `${where}: POST /audio/transcriptions answered HTTP ${res.status} (the key is refused); voice calls would not be heard` };
    if (res.status === 404 || res.status === 405) {
      return { name: 'stt', status: 'fail', detail: `${where} does not transcribe (POST /audio/transcriptions answered HTTP ${res.status}: an LLM-only server?); voice calls would not be heard: ${STT_OPTIONS}` };
    }
    return { name: 'stt', status: 'ok', detail: `${where} transcribes (POST /audio/transcriptions answered HTTP ${res.status} to a request without audio), for strategies naming no transcriber` };
  } catch (err) {
    const cause = err instanceof Error && err.name === 'TimeoutError' ? `no answer within ${timeoutMs / 1000} s` : ((err as { cause?: { message?: string } }).cause?.message ?? 'no answer');
    return { name: 'stt', status: 'fail', detail: `${where}: POST /audio/transcriptions got no answer (${cause}); voice calls would not be heard` };
  }
}

/** Strategies naming no voice speak with eSpeak NG, built in: nothing to configure. */
export const ttsCheck = (): Check => ({ name: 'tts', status: 'ok', detail: 'eSpeak NG, built in (no key, no network), for strategies naming no voice' });
