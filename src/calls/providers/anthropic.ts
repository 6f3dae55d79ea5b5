import { createAnthropicLlm } from '../llm-anthropic.ts';
import { defineProvider, platformVariables } from './descriptor.ts';

const PUBLIC_API = 'https://api.anthropic.com';

/** Anthropic: the call's LLM through its Messages API, streamed, with tool use. */
export const anthropic = defineProvider({
  name: 'anthropic',
  title: 'Anthropic',
  defaultBaseUrl: PUBLIC_API,
  credential: { apiKey: 'required', baseUrl: 'optional' },
  platform: platformVariables('ANTHROPIC', 'Anthropic', 'anthropic', PUBLIC_API),
  llm: { create: createAnthropicLlm },
});
