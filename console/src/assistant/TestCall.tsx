import { useEffect, useRef, useState, type FormEvent } from 'react';
import { Link } from 'react-router';
import { inOrganization } from '../api/client';
import type { Kind } from '../api/types';
import { ErrorBox, TextArea, TextField } from '../components/form';
import { useScope, useSession } from '../session';
import { MicrophoneError, openVoiceAudio, type VoiceAudio } from '../voice/audio';
import { applyFrame, EMPTY_TIMELINE, type ServerFrame } from './timeline';
import { CallTimeline } from './Timeline';

/** What the microphone worklet sends and the player plays: the call's `audio` format. */
const CALL_AUDIO = { encoding: 'pcm_s16le', sampleRate: 16000 } as const;

type State = 'idle' | 'connecting' | 'live' | 'ended';

/**
 * A test call over the call WebSocket, typed (text) or spoken (Talk: microphone in, the
 * assistant's voice out). The transcript, tool calls and their results are on one timeline.
 */
export function TestCall({ kind, ownerId }: { kind: Kind; ownerId: string }) {
  const { api } = useSession();
  const scope = useScope();
  const [timeline, setTimeline] = useState(EMPTY_TIMELINE);
  const [state, setState] = useState<State>('idle');
  const [voice, setVoice] = useState(false);
  const [muted, setMuted] = useState(false);
  const [processing, setProcessing] = useState(true);
  const [played, setPlayed] = useState({ samples: 0, rate: 0 });
  const [callId, setCallId] = useState<string | null>(null);
  const [userValues, setUserValues] = useState('{}');
  const [text, setText] = useState('');
  const [error, setError] = useState<unknown>(null);
  const [micError, setMicError] = useState<string | null>(null);
  const socket = useRef<WebSocket | null>(null);
  const audio = useRef<VoiceAudio | null>(null);
  const live = useRef(false);
  const started = useRef(0);

  const hungUp = useRef(false);

  /** The speaker plays out what it holds (up to a second) unless the user hung up. */
  const closeAudio = (drainMs = 0) => {
    void audio.current?.close(drainMs);
    audio.current = null;
  };
  useEffect(() => () => {
    socket.current?.close();
    closeAudio();
  }, []);
  const since = () => Math.round(performance.now() - started.current);

  const start = async (withVoice: boolean) => {
    setError(null);
    setMicError(null);
    setTimeline(EMPTY_TIMELINE);
    setVoice(withVoice);
    setMuted(false);
    setPlayed({ samples: 0, rate: 0 });
    setState('connecting');
    hungUp.current = false;
    try {
      // The microphone first: a refused permission starts no call.
      if (withVoice) {
        audio.current = await openVoiceAudio({
          onFrame: (frame) => {
            if (live.current && socket.current?.readyState === WebSocket.OPEN) socket.current.send(frame);
          },
          onPlayed: (samples, rate) => setPlayed({ samples, rate }),
        }, processing);
      }
      const body = { userValues: JSON.parse(userValues || '{}') as Record<string, unknown>, ...(withVoice ? { audio: CALL_AUDIO } : {}) };
      const org = inOrganization(api, scope);
      const call = await (kind === 'agent'
        ? org.startAgentCall({ path: { agentId: ownerId }, body })
        : org.startAssistantCall({ path: { assistantId: ownerId }, body }));
      setCallId(call.id);
      started.current = performance.now();
      const ws = new WebSocket(call.websocketUrl);
      ws.binaryType = 'arraybuffer';
      socket.current = ws;
      ws.onmessage = (event: MessageEvent<string | ArrayBuffer>) => {
        if (typeof event.data !== 'string') {
          audio.current?.play(event.data);
          return;
        }
        const frame = JSON.parse(event.data) as ServerFrame;
        if (frame.type === 'call_started') {
          live.current = true;
          setState('live');
        }
        // Paused: what is buffered is dropped (the service sends it again if the assistant resumes); interrupted: it will not come.
        if (frame.type === 'interrupted' || frame.type === 'turn_paused') audio.current?.clear();
        if (frame.type === 'call_ended') setState('ended');
        const at = since();
        setTimeline((t) => applyFrame(t, frame, at));
      };
      ws.onclose = () => {
        live.current = false;
        setState('ended');
        closeAudio(hungUp.current ? 0 : 1000);
      };
      ws.onerror = () => setError(new Error('The call connection failed'));
    } catch (e) {
      if (e instanceof MicrophoneError) setMicError(e.message);
      else setError(e);
      closeAudio();
      setState('idle');
    }
  };

  const send = (event: FormEvent) => {
    event.preventDefault();
    if (!text.trim() || !socket.current) return;
    socket.current.send(JSON.stringify({ type: 'user_message', text }));
    const at = since();
    setTimeline((t) => ({ ...t, entries: [...t.entries, { kind: 'user', text, at }] }));
    setText('');
  };
  const hangUp = () => {
    hungUp.current = true;
    audio.current?.clear();
    socket.current?.send(JSON.stringify({ type: 'end' }));
  };
  const toggleMute = () => {
    audio.current?.setMuted(!muted);
    setMuted(!muted);
  };
  const again = state === 'ended';

  return (
    <section className="card" aria-labelledby="test-call">
      <h2 id="test-call">Test call</h2>
      {state === 'idle' || state === 'ended'
        ? (
          <div className="row">
            <TextArea label="userValues (JSON)" rows={2} value={userValues} onChange={(e) => setUserValues(e.target.value)} hint="Fill {{placeholders}} in the prompt and greeting" />
            <button type="button" className="primary" onClick={() => void start(false)}>{again ? 'Start another text call' : 'Start text call'}</button>
            <button type="button" className="primary" onClick={() => void start(true)} aria-describedby="talk-hint">{again ? 'Talk again' : 'Talk'}</button>
            <label className="check">
              <input type="checkbox" checked={processing} onChange={(e) => setProcessing(e.target.checked)} />
              Echo cancellation and noise suppression
            </label>
          </div>
        )
        : (
          <div className="row" role="group" aria-label="Call controls">
            {voice && <button type="button" onClick={toggleMute} aria-pressed={muted} disabled={state !== 'live'}>{muted ? 'Unmute' : 'Mute'}</button>}
            <button type="button" className="danger" onClick={hangUp} disabled={state !== 'live'}>{voice ? 'Hang up' : 'End call'}</button>
            {voice && state === 'live' && <span className="note" role="status">{muted ? 'Microphone muted' : 'Listening…'}</span>}
          </div>
        )}
      <p id="talk-hint" className="hint">
        Talk uses the microphone and speaker (the browser asks for the microphone once). Keep echo cancellation on with
        speakers, or the assistant hears itself; off, the service gets the microphone unchanged.
      </p>
      {micError && <div className="error-box" role="alert"><p>{micError}</p></div>}
      <ErrorBox error={error} />
      <CallTimeline timeline={timeline} />
      {state === 'live' && (
        <form className="row" onSubmit={send}>
          <TextField label="Say" value={text} onChange={(e) => setText(e.target.value)} autoComplete="off" />
          <button type="submit" className="primary" disabled={!text.trim()}>Send</button>
        </form>
      )}
      {voice && (
        <p className="note" data-played-samples={played.samples} data-played-rate={played.rate}>
          Played {played.rate ? (played.samples / played.rate).toFixed(1) : '0.0'} s of the assistant's voice
        </p>
      )}
      {callId && state === 'ended' && <p><Link to={`/calls/${callId}`}>Open the call record</Link></p>}
    </section>
  );
}
