import { createDeepgramStt, DEEPGRAM_BASE_URL } from '../../voice/stt/deepgram.ts';
import { AURA_SAMPLE_RATES, openAuraSession } from '../../voice/tts/deepgram.ts';
import { defineProvider, platformVariables } from './descriptor.ts';

const listen = createDeepgramStt();

/** Deepgram: live speech to text over its `/v1/listen` WebSocket, and Aura text to speech over `/v1/speak`. */
export const deepgram = defineProvider({
  name: 'deepgram',
  title: 'Deepgram',
  defaultBaseUrl: DEEPGRAM_BASE_URL,
  credential: { apiKey: 'required', baseUrl: 'optional' },
  platform: platformVariables('DEEPGRAM', 'Deepgram', 'deepgram', DEEPGRAM_BASE_URL),
  stt: { interim: true, streaming: true, open: (options) => listen.open(options) },
  tts: { sampleRates: AURA_SAMPLE_RATES, streaming: true, open: (options) => openAuraSession(options) },
});
