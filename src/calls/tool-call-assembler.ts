import type { ToolCallRequest } from './tool-call.ts';
import { MAX_TOOL_ARGUMENTS_BYTES } from './tool-arguments.ts';

/** One streamed piece of a tool call, as OpenAI-compatible servers send it (every field may be missing). */
export interface ToolCallPiece {
  index?: number | undefined;
  id?: string | undefined;
  function?: { name?: string | undefined; arguments?: string | undefined } | undefined;
}

/**
 * Puts streamed tool calls together. OpenAI sends a call's id and name once, then its
 * arguments in parts under the same `index`; real servers differ: older Ollama, Gemini's
 * OpenAI-compatible endpoint and mistral.rs send whole calls without `index`, and current Ollama
 * sends several calls all with `index: 0` and different ids. So a piece with an id belongs to
 * the call of that id (a new one the first time), a piece without one to the call its `index`
 * last named, and a piece with neither to a new call when it names a function, else to the
 * last call.
 */
export class ToolCallAssembler {
  private readonly calls: ToolCallRequest[] = [];
  private readonly byId = new Map<string, ToolCallRequest>();
  private readonly byIndex = new Map<number, ToolCallRequest>();

  add(piece: ToolCallPiece): void {
    const index = typeof piece.index === 'number' ? piece.index : undefined;
    let call: ToolCallRequest | undefined;
    if (piece.id) call = this.byId.get(piece.id);
    else if (index !== undefined) call = this.byIndex.get(index);
    else if (!piece.function?.name) call = this.calls.at(-1);
    if (!call) {
      call = { id: piece.id ?? '', name: '', arguments: '' };
      this.calls.push(call);
      if (piece.id) this.byId.set(piece.id, call);
    }
    if (index !== undefined) this.byIndex.set(index, call);
    if (piece.function?.name) call.name = piece.function.name;
    // Past the limit the rest is not kept: the call is refused for its size (tool-arguments.ts) all the same.
    if (piece.function?.arguments && call.arguments.length <= MAX_TOOL_ARGUMENTS_BYTES) call.arguments += piece.function.arguments;
  }

  /** The calls in the order they began; one without an id gets one (the tool result must name it). */
  done(): ToolCallRequest[] {
    return this.calls.map((c) => (c.id ? c : { ...c, id: `call_${crypto.randomUUID().replaceAll('-', '')}` }));
  }
}
