/** The JSON text frames of a WebSocket call (docs/calls.md). */
export type ServerFrame =
  | { type: 'call_started'; callId: string }
  | { type: 'assistant_delta'; text: string }
  | { type: 'assistant_message'; text: string }
  | { type: 'tool_call'; id: string; name: string; arguments: string }
  | { type: 'tool_result'; id: string; name: string; ok: boolean; statusCode: number | null; latencyMs: number }
  | { type: 'call_ended'; reason: EndReason }
  | { type: 'error'; message: string };

export type ClientFrame = { type: 'user_message'; text: string } | { type: 'end' };

/**
 * Why a call ended. `client_ended`: an `end` frame; `client_disconnected`: the socket closed
 * without one; `idle_timeout` / `max_duration`: a limit; `error`: the LLM failed;
 * `server_shutdown`: the service stopped; `not_connected`: nobody connected before the token expired.
 */
export type EndReason = 'client_ended' | 'client_disconnected' | 'idle_timeout' | 'max_duration' | 'error' | 'server_shutdown' | 'not_connected';

export const MAX_USER_TEXT = 10_000;

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);

/** A client frame, or the reason it is refused (sent back as an `error` frame; the call goes on). */
export function parseClientFrame(raw: string): ClientFrame | { error: string } {
  let value: unknown;
  try {
    value = JSON.parse(raw);
  } catch {
    return { error: 'Frames must be JSON text' };
  }
  if (!isObject(value)) return { error: 'A frame must be a JSON object with a "type"' };
  if (value.type === 'end') {
    return Object.keys(value).length === 1 ? { type: 'end' } : { error: 'An "end" frame has no other fields' };
  }
  if (value.type === 'user_message') {
    const extra = Object.keys(value).filter((k) => k !== 'type' && k !== 'text');
    if (extra.length) return { error: `Unknown field "${extra[0]?.slice(0, 64)}" in user_message` };
    if (typeof value.text !== 'string' || !value.text.trim()) return { error: '"text" must be a non-empty string' };
    if (value.text.length > MAX_USER_TEXT) return { error: `"text" must be at most ${MAX_USER_TEXT} characters` };
    return { type: 'user_message', text: value.text };
  }
  return { error: 'Unknown frame type; expected "user_message" or "end"' };
}
