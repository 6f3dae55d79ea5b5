/** The frames of the call WebSocket (docs/calls.md) and the timeline entries they make. */

export type Entry =
  | { kind: 'assistant' | 'user'; text: string; at: number }
  | { kind: 'tool_call'; id: string; name: string; arguments: string; at: number }
  | { kind: 'tool_result'; id: string; name: string; ok: boolean; statusCode: number | null; latencyMs: number; at: number }
  | { kind: 'system'; text: string; at: number };

export type ServerFrame =
  | { type: 'call_started'; callId: string }
  | { type: 'speech_started' }
  | { type: 'user_transcript'; text: string; final: boolean }
  | { type: 'turn_paused' }
  | { type: 'turn_resumed' }
  | { type: 'interrupted'; heard: string }
  | { type: 'tool_waiting'; names: string[]; elapsedMs: number }
  | { type: 'assistant_delta'; text: string }
  | { type: 'assistant_message'; text: string }
  | { type: 'tool_call'; id: string; name: string; arguments: string }
  | { type: 'tool_result'; id: string; name: string; ok: boolean; statusCode: number | null; latencyMs: number }
  | { type: 'dtmf'; digits: string }
  | { type: 'error'; message: string }
  | { type: 'turn_done' }
  | { type: 'call_ended'; reason: string };

/** What is said but not final yet: the answer as it streams, the caller's interim transcript. */
export interface Partials {
  assistant: string;
  user: string;
}

export interface Timeline {
  entries: Entry[];
  partials: Partials;
}

export const EMPTY_TIMELINE: Timeline = { entries: [], partials: { assistant: '', user: '' } };

/** The timeline after one server frame arrived `at` ms into the call. */
export function applyFrame(timeline: Timeline, frame: ServerFrame, at: number): Timeline {
  const { entries, partials } = timeline;
  const add = (entry: Entry, next: Partials = partials): Timeline => ({ entries: [...entries, entry], partials: next });
  switch (frame.type) {
    case 'call_started': return add({ kind: 'system', text: 'Call started', at });
    case 'speech_started': return add({ kind: 'system', text: 'You started speaking', at });
    case 'user_transcript':
      return frame.final
        ? add({ kind: 'user', text: frame.text, at }, { ...partials, user: '' })
        : { entries, partials: { ...partials, user: frame.text } };
    case 'turn_paused': return add({ kind: 'system', text: 'You spoke over the assistant: paused', at });
    case 'turn_resumed': return add({ kind: 'system', text: 'Not an interruption: the assistant goes on', at });
    case 'interrupted':
      return add({ kind: 'system', text: `Interrupted; you heard: “${frame.heard}”`, at }, { ...partials, assistant: '' });
    case 'tool_waiting': return add({ kind: 'system', text: `Waiting for ${frame.names.join(', ')} (${(frame.elapsedMs / 1000).toFixed(1)} s)`, at });
    case 'assistant_delta': return { entries, partials: { ...partials, assistant: partials.assistant + frame.text } };
    case 'assistant_message': return add({ kind: 'assistant', text: frame.text, at }, { ...partials, assistant: '' });
    case 'tool_call': return add({ kind: 'tool_call', id: frame.id, name: frame.name, arguments: frame.arguments, at });
    case 'tool_result':
      return add({ kind: 'tool_result', id: frame.id, name: frame.name, ok: frame.ok, statusCode: frame.statusCode, latencyMs: frame.latencyMs, at });
    case 'dtmf': return add({ kind: 'system', text: `Keys: ${frame.digits}`, at });
    case 'error': return add({ kind: 'system', text: `Error: ${frame.message}`, at });
    case 'call_ended': return add({ kind: 'system', text: `Call ended (${frame.reason})`, at }, { assistant: '', user: '' });
    case 'turn_done': return timeline;
    // A frame this console does not know yet (a newer service) changes nothing.
    default: return timeline;
  }
}
