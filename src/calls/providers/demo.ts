import { createDemoLlm } from '../llm-demo.ts';
import { defineProvider } from './descriptor.ts';

/**
 * Parley's built-in demo model: rules in this process, no key, no network. A strategy may name
 * it (`llm.provider: "demo"`), and it is the platform's LLM when neither OPENAI_BASE_URL nor
 * OPENAI_API_KEY is set, so a fresh install can hold a conversation with tool calls at once.
 */
export const demo = defineProvider({
  name: 'demo',
  title: 'Demo model (built in)',
  defaultBaseUrl: null,
  credential: null,
  platform: null,
  llm: { create: createDemoLlm },
});
