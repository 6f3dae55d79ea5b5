import { useEffect, useRef, useState, type FormEvent } from 'react';
import { Link } from 'react-router';
import { data } from '../api/client';
import type { Kind } from '../api/types';
import { ErrorBox, TextArea, TextField } from '../components/form';
import { useScope, useSession } from '../session';

/** One line of the call's timeline, as the frames of docs/calls.md arrive. */
type Entry =
  | { kind: 'assistant' | 'user'; text: string; at: number }
  | { kind: 'tool_call'; id: string; name: string; arguments: string; at: number }
  | { kind: 'tool_result'; id: string; name: string; ok: boolean; statusCode: number | null; latencyMs: number; at: number }
  | { kind: 'system'; text: string; at: number };

type ServerFrame =
  | { type: 'call_started'; callId: string }
  | { type: 'assistant_delta'; text: string }
  | { type: 'assistant_message'; text: string }
  | { type: 'tool_call'; id: string; name: string; arguments: string }
  | { type: 'tool_result'; id: string; name: string; ok: boolean; statusCode: number | null; latencyMs: number }
  | { type: 'error'; message: string }
  | { type: 'call_ended'; reason: string };

/** A text call over the call WebSocket: the transcript, tool calls and their results on one timeline. */
export function TestCall({ kind, ownerId }: { kind: Kind; ownerId: string }) {
  const { api } = useSession();
  const scope = useScope();
  const [entries, setEntries] = useState<Entry[]>([]);
  const [partial, setPartial] = useState('');
  const [state, setState] = useState<'idle' | 'connecting' | 'live' | 'ended'>('idle');
  const [callId, setCallId] = useState<string | null>(null);
  const [userValues, setUserValues] = useState('{}');
  const [text, setText] = useState('');
  const [error, setError] = useState<unknown>(null);
  const socket = useRef<WebSocket | null>(null);
  const started = useRef(0);

  useEffect(() => () => socket.current?.close(), []);
  const add = (entry: Entry) => setEntries((list) => [...list, entry]);
  const since = () => Math.round(performance.now() - started.current);

  const start = async () => {
    setError(null);
    setEntries([]);
    setState('connecting');
    try {
      const body = { userValues: JSON.parse(userValues || '{}') as Record<string, unknown> };
      const call = await data(kind === 'agent'
        ? api.POST('/api/v1/vendors/{vendorId}/organizations/{organizationId}/agents/{agentId}/calls', { params: { path: { ...scope, agentId: ownerId } }, body })
        : api.POST('/api/v1/vendors/{vendorId}/organizations/{organizationId}/assistants/{assistantId}/calls', { params: { path: { ...scope, assistantId: ownerId } }, body }));
      setCallId(call.id);
      started.current = performance.now();
      const ws = new WebSocket(call.websocketUrl);
      socket.current = ws;
      ws.onmessage = (event) => {
        const frame = JSON.parse(String(event.data)) as ServerFrame;
        switch (frame.type) {
          case 'call_started': setState('live'); add({ kind: 'system', text: 'Call started', at: since() }); break;
          case 'assistant_delta': setPartial((p) => p + frame.text); break;
          case 'assistant_message': setPartial(''); add({ kind: 'assistant', text: frame.text, at: since() }); break;
          case 'tool_call': add({ kind: 'tool_call', id: frame.id, name: frame.name, arguments: frame.arguments, at: since() }); break;
          case 'tool_result': add({ kind: 'tool_result', id: frame.id, name: frame.name, ok: frame.ok, statusCode: frame.statusCode, latencyMs: frame.latencyMs, at: since() }); break;
          case 'error': add({ kind: 'system', text: `Error: ${frame.message}`, at: since() }); break;
          case 'call_ended': setState('ended'); add({ kind: 'system', text: `Call ended (${frame.reason})`, at: since() }); break;
        }
      };
      ws.onclose = () => setState((s) => (s === 'ended' ? s : 'ended'));
      ws.onerror = () => setError(new Error('The call connection failed'));
    } catch (e) {
      setError(e);
      setState('idle');
    }
  };

  const send = (event: FormEvent) => {
    event.preventDefault();
    if (!text.trim() || !socket.current) return;
    socket.current.send(JSON.stringify({ type: 'user_message', text }));
    add({ kind: 'user', text, at: since() });
    setText('');
  };

  return (
    <section className="card" aria-labelledby="test-call">
      <h2 id="test-call">Test call</h2>
      {state === 'idle' || state === 'ended'
        ? (
          <div className="row">
            <TextArea label="userValues (JSON)" rows={2} value={userValues} onChange={(e) => setUserValues(e.target.value)} hint="Fill {{placeholders}} in the prompt and greeting" />
            <button type="button" className="primary" onClick={() => void start()}>{state === 'ended' ? 'Start another text call' : 'Start text call'}</button>
          </div>
        )
        : <button type="button" className="danger" onClick={() => socket.current?.send(JSON.stringify({ type: 'end' }))}>End call</button>}
      <ErrorBox error={error} />
      <ol className="timeline" aria-label="Call timeline" aria-live="polite">
        {entries.map((e, i) => (
          <li key={i} className={`t-${e.kind}`}>
            <span className="t-at">{(e.at / 1000).toFixed(1)} s</span>
            {e.kind === 'assistant' && <span><strong>Assistant:</strong> {e.text}</span>}
            {e.kind === 'user' && <span><strong>You:</strong> {e.text}</span>}
            {e.kind === 'system' && <span className="note">{e.text}</span>}
            {e.kind === 'tool_call' && <span><strong>Tool call</strong> <code>{e.name}</code> <code>{e.arguments}</code></span>}
            {e.kind === 'tool_result' && (
              <span><strong>Tool result</strong> <code>{e.name}</code> <span className={e.ok ? 'good' : 'bad'}>{e.ok ? 'ok' : 'failed'}</span> {e.statusCode ?? 'no answer'} in {e.latencyMs} ms</span>
            )}
          </li>
        ))}
        {partial && <li className="t-assistant"><span className="t-at">…</span><span><strong>Assistant:</strong> {partial}</span></li>}
      </ol>
      {state === 'live' && (
        <form className="row" onSubmit={send}>
          <TextField label="Say" value={text} onChange={(e) => setText(e.target.value)} autoComplete="off" />
          <button type="submit" className="primary" disabled={!text.trim()}>Send</button>
        </form>
      )}
      {callId && state === 'ended' && <p><Link to={`/calls/${callId}`}>Open the call record</Link></p>}
      <section className="audio-slot" aria-labelledby="audio-call">
        <h3 id="audio-call">Voice</h3>
        {/* Microphone and speaker: another change brings audio calls (audio frames on this socket); they plug in here. */}
        <p className="note">Voice test calls (microphone and speaker) come with audio calls; this panel is text only for now.</p>
      </section>
    </section>
  );
}
