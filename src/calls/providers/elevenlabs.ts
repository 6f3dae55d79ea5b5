import { DEFAULT_ELEVENLABS_BASE_URL, elevenLabsTts } from '../../voice/tts/elevenlabs.ts';
import { defineProvider, platformVariables } from './descriptor.ts';

/** ElevenLabs: text to speech over its multi-context WebSocket. */
export const elevenlabs = defineProvider({
  name: 'elevenlabs',
  title: 'ElevenLabs',
  defaultBaseUrl: DEFAULT_ELEVENLABS_BASE_URL,
  credential: { apiKey: 'required', baseUrl: 'optional' },
  platform: platformVariables('ELEVENLABS', 'ElevenLabs', 'elevenlabs', DEFAULT_ELEVENLABS_BASE_URL),
  tts: { sampleRates: [8000, 16000, 22050, 24000, 44100], streaming: true, open: (options) => elevenLabsTts.open(options) },
});
