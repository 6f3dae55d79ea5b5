import { createLlm } from '../llm-openai.ts';
import { defineProvider } from './descriptor.ts';

/**
 * Any chat-completions server (Groq, Together, Fireworks, vLLM, Ollama, llama.cpp's server) as
 * the call's LLM. It has no public address of its own, so a credential names its baseUrl; a key
 * is sent only when the credential holds one (local servers take none). No platform fallback:
 * the platform's own such server is OPENAI_BASE_URL.
 */
export const openaiCompatible = defineProvider({
  name: 'openai_compatible',
  title: 'OpenAI-compatible server',
  defaultBaseUrl: null,
  credential: { apiKey: 'optional', baseUrl: 'required' },
  platform: null,
  llm: { create: createLlm },
});
