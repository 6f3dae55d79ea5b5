import { createOpenAiStt } from '../../voice/stt/openai.ts';
import { defineProvider } from './descriptor.ts';

const transcriptions = createOpenAiStt({ name: 'whisper' });

/** What a transcriber naming no model asks a Whisper server for (speaches' small English-and-more model). */
const WHISPER_DEFAULT_MODEL = 'Systran/faster-whisper-small';

/**
 * A self-hosted Whisper-compatible server (speaches, formerly faster-whisper-server; whisper.cpp's
 * server; LocalAI) as speech to text, over OpenAI's transcription API. It has no public address,
 * so its base URL is always named (WHISPER_BASE_URL, or a credential's baseUrl), and a key is
 * sent only when one is given: apart from OPENAI_BASE_URL, so the LLM and the STT may be two servers.
 */
export const whisper = defineProvider({
  name: 'whisper',
  title: 'Whisper-compatible server',
  defaultBaseUrl: null,
  credential: { apiKey: 'optional', baseUrl: 'required' },
  platform: {
    apiKey: { name: 'WHISPER_API_KEY', kind: 'apiKey', description: 'key sent to WHISPER_BASE_URL, when the server wants one (self-hosted ones usually take none)' },
    baseUrl: {
      name: 'WHISPER_BASE_URL', kind: 'baseUrl',
      description: `a self-hosted Whisper-compatible server (OpenAI's transcription API, e.g. http://127.0.0.1:8000/v1): the speech to text of strategies naming no transcriber, and of transcriber whisper, for organizations without a whisper provider credential (default model ${WHISPER_DEFAULT_MODEL})`,
    },
    keyless: true,
  },
  stt: { interim: false, streaming: false, open: (options) => transcriptions.open({ ...options, model: options.model ?? WHISPER_DEFAULT_MODEL }) },
});
