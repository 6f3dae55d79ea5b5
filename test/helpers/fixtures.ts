/** Request bodies that tests build on. */
export function toolSchema(name: string, extra: Record<string, unknown> = {}) {
  return JSON.stringify({
    name,
    description: 'Look up an order',
    parameters: {
      type: 'object',
      properties: { orderNumber: { type: 'string', description: 'The order number' }, express: { type: 'boolean' } },
      required: ['orderNumber'],
    },
    ...extra,
  });
}

export function toolWebhook(name: string, overrides: Record<string, unknown> = {}) {
  return {
    type: 'tool_webhook',
    parameters: {
      name,
      serverUrl: 'https://tools.example.com/orders',
      schema: toolSchema(name),
      headers: { Authorization: `Bearer webhook-token-${name}` },
      ...overrides,
    },
  };
}

export function hook(type = 'transcript_ready', secret = 'whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw') {
  return { type, parameters: { url: 'https://hooks.example.com/parley', secret } };
}

export const strategyBody = {
  name: 'Warm voice',
  type: 'text_to_speech',
  parameters: {
    model: 'gpt-4o-mini',
    temperature: 0.7,
    outputSampleRate: 16000,
    voice: { provider: 'elevenlabs', voiceId: 'Rachel', modelId: 'eleven_turbo_v2', speed: 1.1, stability: 0.5, similarityBoost: 0.75, style: 0, useSpeakerBoost: true },
    vad: { confidenceThreshold: 0.6, minVolume: 0.1, startDuration: 0.2, stopDuration: 0.8, backbufferDuration: 1 },
  },
};
