import type { Llm, LlmSettings } from '../../calls/llm.ts';

/** The longest a screening assistant waits for the LLM's reply; then the agent says its name alone. */
const REPLY_MS = 8000;
const MAX_REPLY = 600;

/**
 * What the agent tells a call-screening assistant when its voicemail_detection has no message:
 * one LLM round with the agent's own prompt, asked for its name and the reason for the call in a
 * sentence or two. The screener's words go in as what it said (like any caller's words would).
 */
export async function screeningReply(
  llm: Llm, settings: LlmSettings, systemPrompt: string | null, agentName: string, heard: readonly string[], signal: AbortSignal,
): Promise<string> {
  const said = heard.length ? ` It said: "${heard.join(' ').slice(0, 1000)}"` : '';
  const round = await llm.round({
    messages: [
      ...(systemPrompt ? [{ role: 'system' as const, content: systemPrompt }] : []),
      {
        role: 'user',
        content: `A call-screening assistant answered this call for the person you are calling.${said} Reply with exactly what you say to it and nothing else: ` +
          `one or two short sentences giving your name, ${agentName}, and why you are calling.`,
      },
    ],
    tools: [],
    settings,
    toolChoice: 'none',
    signal: AbortSignal.any([signal, AbortSignal.timeout(REPLY_MS)]),
    onDelta: () => {},
  });
  const text = round.text.trim().slice(0, MAX_REPLY);
  if (!text) throw new Error('the LLM said nothing');
  return text;
}
