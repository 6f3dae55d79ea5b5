import { createHash, randomBytes, randomUUID } from 'node:crypto';
import type { Clock } from '../clock.ts';
import { EgressError, type EgressRequest, type EgressResponse } from '../egress/client.ts';
import type { ToolWebhook } from './tools.ts';
import { recordedArguments, readToolArguments, refusalFor } from './tool-arguments.ts';
import { webhookTransport, type TransportInfo } from './transports/transport.ts';
import { sign } from '../crypto/webhook-signing.ts';

/** What the LLM gets instead of a result, whatever went wrong (contract.md: one generic string). */
export const TOOL_FAILURE = 'Tool call failed: the tool server did not return a usable result.';
export const MAX_TOOL_RESPONSE_BYTES = 64 * 1024;

/** How a tool call went; the last three are call-control outcomes (src/calls/dispatch.ts). */
export const TOOL_OUTCOMES = [
  'ok', 'http_error', 'timeout', 'refused', 'too_large', 'unreachable', 'invalid_arguments', 'unknown_tool', 'aborted',
  'transfer_failed', 'dtmf_failed', 'unsupported',
] as const;
export type ToolOutcome = (typeof TOOL_OUTCOMES)[number];

/** One tool call as the LLM asked for it. */
export interface ToolCallRequest {
  id: string;
  name: string;
  arguments: string;
}

export interface ToolCallContext {
  callId: string;
  traceId: string;
  transport: TransportInfo;
  clock: Clock;
  signal: AbortSignal;
}

export interface ToolCallResult {
  /** The tool message content for the LLM: the response body, or TOOL_FAILURE. */
  content: string;
  ok: boolean;
  statusCode: number | null;
  latencyMs: number;
  outcome: ToolOutcome;
  /** The parsed arguments, or the raw text when they were not a JSON object. */
  parameters: unknown;
  /** For the log: built from our own templates, host and error codes only (never headers or bodies). */
  detail?: string;
}

export type EgressSend = (request: EgressRequest) => Promise<EgressResponse>;

const TRACE_ID = /^[\da-f]{32}$/;

/** A W3C traceparent in the call's trace: its trace id when it is one, else one derived from it. */
export function traceparentFor(traceId: string): string {
  const trace = TRACE_ID.test(traceId) && !/^0+$/.test(traceId) ? traceId : createHash('sha256').update(traceId).digest('hex').slice(0, 32);
  return `00-${trace}-${randomBytes(8).toString('hex')}-01`;
}

const OUTCOME_BY_KIND: Record<EgressError['kind'], ToolOutcome> = {
  refused_address: 'refused', timeout: 'timeout', too_large: 'too_large', aborted: 'aborted',
  dns: 'unreachable', connect: 'unreachable', invalid_url: 'unreachable',
};

/**
 * POSTs one tool call to its webhook exactly as interface.md says: the configured headers on
 * every request, and a body of type, name, callId, transport and parameters, nothing else.
 * Parley adds X-Request-Id and traceparent, and Standard Webhooks headers with a signingSecret.
 */
export async function callToolWebhook(send: EgressSend, tool: ToolWebhook | undefined, call: ToolCallRequest, ctx: ToolCallContext): Promise<ToolCallResult> {
  const started = performance.now();
  const read = readToolArguments(call.arguments);
  const fail = (outcome: ToolOutcome, statusCode: number | null = null, detail?: string, content = TOOL_FAILURE): ToolCallResult => ({
    content, ok: false, statusCode, outcome, parameters: recordedArguments(call.arguments, read),
    latencyMs: Math.round(performance.now() - started), ...(detail ? { detail } : {}),
  });
  if (!tool) return fail('unknown_tool');
  if (read.kind === 'refused') return fail('invalid_arguments', null, `arguments ${read.problem}`, refusalFor(read.problem));
  if (read.kind !== 'object') return fail('invalid_arguments');
  const parameters = read.value;
  const body = JSON.stringify({ type: 'tool_webhook', name: tool.name, callId: ctx.callId, transport: webhookTransport(ctx.transport), parameters });
  const headers: Record<string, string> = {
    ...tool.headers,
    'content-type': 'application/json',
    'x-request-id': ctx.traceId,
    traceparent: traceparentFor(ctx.traceId),
  };
  if (tool.signingSecret !== null) {
    // Standard Webhooks, as for call event hooks (the same signing code).
    const id = `msg_${randomUUID().replaceAll('-', '')}`;
    const seconds = Math.floor(ctx.clock.now().getTime() / 1000);
    Object.assign(headers, { 'webhook-id': id, 'webhook-timestamp': String(seconds), 'webhook-signature': sign(tool.signingSecret, id, seconds, body) });
  }
  try {
    const response = await send({
      url: tool.serverUrl, method: 'POST', headers, body,
      timeoutMs: tool.timeoutMs, maxResponseBytes: MAX_TOOL_RESPONSE_BYTES, signal: ctx.signal,
    });
    if (response.status < 200 || response.status > 299) return fail('http_error', response.status);
    return { content: response.body, ok: true, statusCode: response.status, outcome: 'ok', parameters, latencyMs: Math.round(performance.now() - started) };
  } catch (error) {
    // A tool failure never ends the call: whatever broke, the LLM gets the generic string.
    if (error instanceof EgressError) return fail(OUTCOME_BY_KIND[error.kind], null, error.detail ?? error.message);
    return fail('unreachable', null, error instanceof Error ? error.name : 'unknown error');
  }
}
