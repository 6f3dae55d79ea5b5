import { findJsonProblem } from '../http/json-body.ts';

/**
 * The most a model's tool arguments may be (their JSON text, in bytes). A tool's schema asks for
 * a few fields; a model told by a caller (a prompt injection) may write megabytes, or JSON
 * nested thousands deep, which stringifying again overflows the stack and the databases' JSON
 * functions refuse. Past this, or past the JSON depth limit of request bodies, the call fails
 * with a result that says why, and the arguments are neither sent nor stored.
 */
export const MAX_TOOL_ARGUMENTS_BYTES = 64 * 1024;

/** The model's arguments, read: an object to use, not an object at all, or refused as unsafe to keep. */
export type ToolArguments =
  | { kind: 'object'; value: Record<string, unknown> }
  | { kind: 'not_an_object' }
  | { kind: 'refused'; problem: string };

export function readToolArguments(raw: string): ToolArguments {
  if (raw.length > MAX_TOOL_ARGUMENTS_BYTES || Buffer.byteLength(raw, 'utf8') > MAX_TOOL_ARGUMENTS_BYTES) {
    return { kind: 'refused', problem: `are larger than ${MAX_TOOL_ARGUMENTS_BYTES / 1024} KiB` };
  }
  if (!raw.trim()) return { kind: 'object', value: {} }; // a tool without parameters: some models send nothing at all
  let value: unknown;
  try {
    value = JSON.parse(raw);
  } catch {
    return { kind: 'not_an_object' };
  }
  // Iterative, so depth costs nothing here; it is the later JSON.stringify and storing that would not cope.
  const problem = findJsonProblem(value);
  if (problem) return { kind: 'refused', problem: `${problem.message.replace(/^is /, 'are ')}${problem.path ? ` (at ${problem.path})` : ''}` };
  return typeof value === 'object' && value !== null && !Array.isArray(value) ? { kind: 'object', value: value as Record<string, unknown> } : { kind: 'not_an_object' };
}

/** What the LLM is told when its arguments are refused: why, that nothing was done, and what to do. */
export const refusalFor = (problem: string) =>
  `Tool call refused: its arguments ${problem}. Nothing was sent to the tool. Call it again with arguments that follow its schema, or answer without it.`;

/** What the record keeps of the arguments: the object, the text when it is not one, and for refused ones only why. */
export function recordedArguments(raw: string, read: ToolArguments): unknown {
  if (read.kind === 'object') return read.value;
  return read.kind === 'refused' ? { refused: read.problem } : raw;
}

/** The arguments as text for the conversation sent back to the LLM and for the `tool_call` frame: refused ones replaced by why. */
export function argumentsText(raw: string): string {
  const read = readToolArguments(raw);
  return read.kind === 'refused' ? JSON.stringify({ refused: read.problem }) : raw;
}
