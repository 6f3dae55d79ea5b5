import { createDeepgramStt, DEEPGRAM_BASE_URL } from '../../voice/stt/deepgram.ts';
import { defineProvider, platformVariables } from './descriptor.ts';

const listen = createDeepgramStt();

/** Deepgram: live speech to text over its `/v1/listen` WebSocket. */
export const deepgram = defineProvider({
  name: 'deepgram',
  title: 'Deepgram',
  defaultBaseUrl: DEEPGRAM_BASE_URL,
  credential: { apiKey: 'required', baseUrl: 'optional' },
  platform: platformVariables('DEEPGRAM', 'Deepgram', 'deepgram', DEEPGRAM_BASE_URL),
  stt: { interim: true, streaming: true, open: (options) => listen.open(options) },
  // Accepted as a voice by the strategy API from the start; Parley cannot speak with Aura yet.
  tts: { sampleRates: [], streaming: true },
});
