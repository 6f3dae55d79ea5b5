import { defineProvider } from './descriptor.ts';

/**
 * Twilio: a credential kind only. Its auth token checks the X-Twilio-Signature of the
 * organization's voice webhooks and is never sent anywhere, so it has no base URL and no
 * platform fallback (every organization brings its own Twilio account).
 */
export const twilio = defineProvider({
  name: 'twilio',
  title: 'Twilio',
  defaultBaseUrl: null,
  credential: { apiKey: 'required', baseUrl: 'none', accountSid: true },
  platform: null,
  telephony: { signatures: true },
});
