import type { ChatCompletionFunctionTool } from 'openai/resources/chat/completions';
import type { SecretBox } from '../crypto/secret-box.ts';

export const DEFAULT_TOOL_TIMEOUT_SECONDS = 10;

/** A tool_webhook extension, ready for a call: header values and signing secret opened. */
export interface ToolWebhook {
  name: string;
  serverUrl: string;
  /** The function-calling spec from the extension's `schema` string. */
  spec: { name: string; description?: string; parameters: Record<string, unknown>; strict?: boolean };
  headers: Readonly<Record<string, string>>;
  timeoutMs: number;
  signingSecret: string | null;
}

/**
 * The assistant's tool_webhook extensions as the call uses them. Secrets are opened once per
 * call and live only in the session's memory; they never reach a frame, a record or a log.
 */
export function toolWebhooksOf(extensions: readonly { type: string; parameters: Record<string, unknown> }[], box: SecretBox): ToolWebhook[] {
  return extensions
    .filter((e) => e.type === 'tool_webhook')
    .map((e) => {
      const p = e.parameters as {
        name: string; serverUrl: string; schema: string; headers?: Record<string, string>; timeoutSeconds?: number; signingSecret?: string;
      };
      const headers = Object.fromEntries(Object.entries(p.headers ?? {}).map(([name, sealed]) => [name, box.open(sealed)]));
      return {
        name: p.name,
        serverUrl: p.serverUrl,
        spec: JSON.parse(p.schema) as ToolWebhook['spec'],
        headers,
        timeoutMs: (p.timeoutSeconds ?? DEFAULT_TOOL_TIMEOUT_SECONDS) * 1000,
        signingSecret: p.signingSecret ? box.open(p.signingSecret) : null,
      };
    });
}

/** The tools as the chat completions API takes them. */
export function functionTools(tools: readonly ToolWebhook[]): ChatCompletionFunctionTool[] {
  return tools.map((t) => ({
    type: 'function',
    function: {
      name: t.name,
      ...(t.spec.description !== undefined ? { description: t.spec.description } : {}),
      parameters: t.spec.parameters,
      ...(t.spec.strict !== undefined ? { strict: t.spec.strict } : {}),
    },
  }));
}
