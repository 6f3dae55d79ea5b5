import { cartesiaTts, DEFAULT_CARTESIA_BASE_URL } from '../../voice/tts/cartesia.ts';
import { defineProvider, platformVariables } from './descriptor.ts';

/** Cartesia: text to speech over its TTS WebSocket, one context per sentence. */
export const cartesia = defineProvider({
  name: 'cartesia',
  title: 'Cartesia',
  defaultBaseUrl: DEFAULT_CARTESIA_BASE_URL,
  credential: { apiKey: 'required', baseUrl: 'optional' },
  platform: platformVariables('CARTESIA', 'Cartesia', 'cartesia', DEFAULT_CARTESIA_BASE_URL),
  tts: { sampleRates: [8000, 16000, 22050, 24000, 44100, 48000], streaming: true, open: (options) => cartesiaTts.open(options) },
});
