import { OpenAiRealtimeClient } from '../../voice/realtime/openai.ts';
import { createOpenAiStt } from '../../voice/stt/openai.ts';
import { DEFAULT_OPENAI_BASE_URL, openAiTts } from '../../voice/tts/openai.ts';
import { createLlm } from '../llm-openai.ts';
import { defineProvider } from './descriptor.ts';

const transcriptions = createOpenAiStt();

/**
 * OpenAI, or any server with its API: the call's LLM (chat completions), speech to text
 * (transcriptions), text to speech (audio/speech) and the Realtime model. Its platform variables
 * are the `openai` SDK's own; a platform base URL without a key serves too (a local server).
 */
export const openai = defineProvider({
  name: 'openai',
  title: 'OpenAI',
  defaultBaseUrl: DEFAULT_OPENAI_BASE_URL,
  credential: { apiKey: 'unless_base_url', baseUrl: 'optional' },
  platform: {
    apiKey: {
      name: 'OPENAI_API_KEY', kind: 'apiKey',
      description: 'key sent to OPENAI_BASE_URL (the LLM, and openai speech for organizations without an openai provider credential); unset sends none (local servers need none)',
    },
    baseUrl: {
      name: 'OPENAI_BASE_URL', kind: 'baseUrl',
      description: `the OpenAI-compatible endpoint of the LLM during calls, and of openai speech for organizations without an openai provider credential (default ${DEFAULT_OPENAI_BASE_URL}; with neither it nor OPENAI_API_KEY set, calls get the built-in demo model)`,
    },
    keyless: true,
  },
  llm: { create: createLlm },
  stt: { interim: false, streaming: false, open: (options) => transcriptions.open(options) },
  tts: { sampleRates: [24000], streaming: true, open: (options) => openAiTts.open(options) },
  realtime: { connect: (options) => OpenAiRealtimeClient.connect(options) },
});
