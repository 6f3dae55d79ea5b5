import type { ClientToolAnswers } from './client-tools.ts';
import { DTMF_OUT_PATTERN, type ControlTool, type ControlType } from './control-tools.ts';
import { readToolArguments, recordedArguments } from './tool-arguments.ts';
import { callToolWebhook, type EgressSend, type ToolCallContext, type ToolCallRequest, type ToolCallResult, type ToolOutcome } from './tool-call.ts';
import type { ToolWebhook } from './tools.ts';
import type { CallControl } from './transports/transport.ts';

/** The longest last sentence end_call says (the extension's own message has the same limit). */
const MAX_SENTENCE = 500;
const DTMF_OUT = new RegExp(DTMF_OUT_PATTERN);

/** What running one tool call needs from its call, whichever turn source (LLM turn, realtime model) asked for it. */
export interface ToolDispatch {
  readonly send: EgressSend;
  /** The assistant's tool webhooks. */
  readonly tools: readonly ToolWebhook[];
  /** The assistant's call-control tools; the model is offered those its transport can do (offeredControls). */
  readonly controls: readonly ControlTool[];
  /** The transport's transfer and DTMF; undefined on transports that have neither. */
  readonly control: CallControl | undefined;
  /** A call whose client answers its tool webhooks (`clientTools`): their requests go to it instead of their servers. */
  readonly clientTools?: ClientToolAnswers | null;
  /** Tool requests use the call's signal (an interruption lets them finish and be recorded). */
  readonly toolContext: ToolCallContext;
  /** Says a whole sentence to the caller; resolves once it went out (on a voice call: its audio was sent). */
  speak(text: string): Promise<void>;
}

/** What the call must do once the tool calls of a round are done and recorded. */
export interface ToolEffect {
  /** The call ends with this reason; nothing the LLM writes afterwards is said. */
  end: 'assistant_ended' | 'transferred';
}

export interface DispatchResult extends ToolCallResult {
  /** Set for call-control tools (the record keeps it, and the `content`, our own words). */
  type?: ControlType;
  effect?: ToolEffect;
}

/** Why a model that called a tool it was not offered (it happens) gets nothing done: said plainly, so it can tell the caller. */
const unsupported = (what: string, transport: string): string =>
  `Not done: this call cannot be ${what} (it is a ${transport} call, which has no phone line to act on). Carry on with the caller.`;

/**
 * Runs one tool call: a tool webhook, or a call-control tool (end_call, transfer_call,
 * send_dtmf). The one place every turn source dispatches tools through; the caller emits the
 * frames, records the result, gives `content` to the model, and applies the `effect`.
 */
export async function dispatchToolCall(host: ToolDispatch, call: ToolCallRequest): Promise<DispatchResult> {
  const control = host.controls.find((c) => c.name === call.name);
  if (!control) {
    const send = host.clientTools ? host.clientTools.sendFor(call.id) : host.send;
    return callToolWebhook(send, host.tools.find((t) => t.name === call.name), call, host.toolContext);
  }
  const started = performance.now();
  const read = readToolArguments(call.arguments);
  const parameters = read.kind === 'object' ? read.value : null;
  const result = (ok: boolean, outcome: ToolOutcome, content: string, effect?: ToolEffect): DispatchResult => ({
    content, ok, statusCode: null, outcome, parameters: recordedArguments(call.arguments, read),
    latencyMs: Math.round(performance.now() - started), type: control.type, ...(effect ? { effect } : {}),
  });
  switch (control.type) {
    case 'end_call': {
      // Hanging up is what the model asked for, even when its arguments are garbled.
      const asked = typeof parameters?.message === 'string' ? parameters.message.trim().slice(0, MAX_SENTENCE) : '';
      const last = asked || control.message;
      if (last) await host.speak(last);
      return result(true, 'ok', last ? `Said "${last}" and hung up.` : 'Hung up.', { end: 'assistant_ended' });
    }
    case 'transfer_call': {
      if (!host.control) return result(false, 'unsupported', unsupported('transferred', host.toolContext.transport.type));
      if (control.message) await host.speak(control.message);
      const outcome = await host.control.transfer(control.destination)
        .catch((error: unknown) => ({ ok: false as const, reason: error instanceof Error ? error.message : 'the transport failed' }));
      if (outcome.ok) return result(true, 'ok', `Transferred the call to ${control.destination}.`, { end: 'transferred' });
      const reason = outcome.reason.trim().slice(0, 200) || 'no reason given';
      const said = control.message ? `Said "${control.message}". ` : '';
      return result(false, 'transfer_failed', `${said}The transfer to ${control.destination} failed (${reason}); the caller is still on the line.`);
    }
    case 'send_dtmf': {
      if (!host.control) return result(false, 'unsupported', unsupported('sent keys', host.toolContext.transport.type));
      const digits = parameters?.digits;
      if (typeof digits !== 'string' || !DTMF_OUT.test(digits)) {
        return result(false, 'invalid_arguments', 'No keys were pressed: "digits" must be 1 to 32 of 0-9, *, #, A-D, with "," or "w" for a 500 ms pause.');
      }
      const keys = digits.replace(/[a-d]/g, (c) => c.toUpperCase());
      const sent = await host.control.sendDtmf(keys).then(() => true, () => false);
      return sent ? result(true, 'ok', `Pressed the keys ${keys}.`) : result(false, 'dtmf_failed', 'The keys could not be sent.');
    }
  }
}
