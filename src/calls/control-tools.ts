import type { ChatCompletionFunctionTool } from 'openai/resources/chat/completions';
import type { CallControl } from './transports/transport.ts';

/** The built-in extension types that act on the call itself rather than calling a webhook. */
export const CONTROL_TYPES = ['end_call', 'transfer_call', 'send_dtmf'] as const;
export type ControlType = (typeof CONTROL_TYPES)[number];

/** What the LLM may send to send_dtmf: keys, and `,` or `w` for a 500 ms pause. */
export const DTMF_OUT_PATTERN = '^[0-9*#A-Da-d,w]{1,32}$';
const TOOL_NAME = /^[A-Za-z0-9_-]{1,64}$/;

const DEFAULT_DESCRIPTIONS: Record<ControlType, string> = {
  end_call: 'Hang up when the conversation is over',
  transfer_call: 'Transfer the caller to a person who can help further',
  send_dtmf: 'Press keys on the phone keypad (DTMF), for example to choose an option in a phone menu',
};

/** A call-control extension, ready for a call. */
export type ControlTool =
  | { type: 'end_call'; name: string; description: string; message: string | null }
  | { type: 'transfer_call'; name: string; description: string; destination: string; message: string | null }
  | { type: 'send_dtmf'; name: string; description: string };

const isControlType = (type: string): type is ControlType => (CONTROL_TYPES as readonly string[]).includes(type);

/** The function name the LLM sees: the extension's name when it is a valid tool name, else its type. */
export function controlToolName(extension: { type: string; name?: string | null | undefined }): string {
  return extension.name && TOOL_NAME.test(extension.name) ? extension.name : extension.type;
}

/**
 * The assistant's call-control extensions as a call uses them. `taken` holds the names of its
 * tool webhooks: a control whose own name is taken (stored before names were checked) falls back
 * to its type, and is left out if that is taken too, so the LLM never sees two tools of one name.
 */
export function controlToolsOf(
  extensions: readonly { type: string; name?: string; parameters: Record<string, unknown> }[], taken: ReadonlySet<string>,
): ControlTool[] {
  const names = new Set(taken);
  const tools: ControlTool[] = [];
  for (const extension of extensions) {
    const { type } = extension;
    if (!isControlType(type)) continue;
    const wanted = controlToolName(extension);
    const name = !names.has(wanted) ? wanted : !names.has(type) ? type : null;
    if (name === null) continue;
    names.add(name);
    const p = extension.parameters as { description?: string; message?: string; destination?: string };
    const description = p.description ?? DEFAULT_DESCRIPTIONS[type];
    const message = p.message ?? null;
    if (type === 'end_call') tools.push({ type, name, description, message });
    else if (type === 'transfer_call' && p.destination) tools.push({ type, name, description, destination: p.destination, message });
    else if (type === 'send_dtmf') tools.push({ type, name, description });
  }
  return tools;
}

/** The controls a call offers: end_call always, transfer and DTMF only when its transport can do them. */
export function offeredControls(tools: readonly ControlTool[], control: CallControl | undefined): ControlTool[] {
  return tools.filter((t) => t.type === 'end_call' || control !== undefined);
}

const PARAMETERS: Record<ControlType, Record<string, unknown>> = {
  end_call: {
    type: 'object',
    properties: { message: { type: 'string', description: 'The last sentence to say before hanging up' } },
    additionalProperties: false,
  },
  transfer_call: { type: 'object', properties: {}, additionalProperties: false },
  send_dtmf: {
    type: 'object',
    properties: {
      digits: { type: 'string', pattern: DTMF_OUT_PATTERN, description: 'The keys to press, in order: 0-9, *, #, A-D; "," or "w" waits 500 ms' },
    },
    required: ['digits'],
    additionalProperties: false,
  },
};

/** The controls as the chat completions API takes them. */
export function controlFunctionTools(tools: readonly ControlTool[]): ChatCompletionFunctionTool[] {
  return tools.map((t) => ({ type: 'function', function: { name: t.name, description: t.description, parameters: PARAMETERS[t.type] } }));
}
