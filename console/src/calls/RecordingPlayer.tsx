import { useEffect, useMemo, useRef, useState } from 'react';
import { errorText } from '../api/client';
import type { Call } from '../api/types';
import { Status } from '../components/form';
import { useScope, useSession } from '../session';

/** Columns of each channel's waveform. */
const COLUMNS = 480;

/** Each channel's loudest sample per column, 0..1: the left (the caller) and the right (the assistant). */
export function peaks(wav: ArrayBuffer, columns = COLUMNS): [number[], number[]] {
  const samples = new Int16Array(wav, 44, Math.floor((wav.byteLength - 44) / 2));
  const frames = Math.floor(samples.length / 2);
  const out: [number[], number[]] = [new Array<number>(columns).fill(0), new Array<number>(columns).fill(0)];
  for (let i = 0; i < frames; i++) {
    const column = Math.min(columns - 1, Math.floor((i / frames) * columns));
    for (const channel of [0, 1] as const) {
      const level = Math.abs(samples[2 * i + channel]!) / 32768;
      if (level > out[channel][column]!) out[channel][column] = level;
    }
  }
  return out;
}

/** A channel's waveform as an SVG path in a 0..COLUMNS × 0..1 box, around its middle. */
const wavePath = (levels: number[]) => levels.map((v, x) => `M${x} ${0.5 - v / 2}V${0.5 + v / 2}`).join('');

export interface Seek {
  ms: number;
  /** Bumped on every request, so seeking twice to the same place plays it again. */
  n: number;
}

/**
 * A call's recording: fetched with the user's token (never a token in a URL) and played from a
 * blob, with both channels drawn (the caller above, the assistant below) and a playhead. A
 * transcript line asks to `seek` there.
 */
export function RecordingPlayer({ call, seek }: { call: Call; seek: Seek | null }) {
  const { api } = useSession();
  const scope = useScope();
  const audio = useRef<HTMLAudioElement>(null);
  const [source, setSource] = useState<{ url: string; levels: [number[], number[]] } | null>(null);
  const [error, setError] = useState<unknown>(null);
  const [position, setPosition] = useState(0);
  const recording = call.recording;
  const ready = recording?.status === 'ready';

  useEffect(() => {
    if (!ready) return undefined;
    let url: string | null = null;
    let gone = false;
    void (async () => {
      try {
        // The SDK's raw client: the token goes in its Authorization header, the body comes as a blob.
        const { data, response } = await api.raw.GET('/api/v1/vendors/{vendorId}/organizations/{organizationId}/calls/{callId}/recording', {
          params: { path: { ...scope, callId: call.id } }, parseAs: 'blob',
        });
        if (!response.ok || !data) throw new Error(`The recording could not be fetched (HTTP ${response.status})`);
        const blob = data;
        const levels = peaks(await blob.arrayBuffer());
        if (gone) return;
        url = URL.createObjectURL(blob);
        setSource({ url, levels });
      } catch (e) {
        if (!gone) setError(e);
      }
    })();
    return () => {
      gone = true;
      if (url) URL.revokeObjectURL(url);
    };
  }, [api, scope, call.id, ready]);

  useEffect(() => {
    const player = audio.current;
    if (!seek || !player) return;
    player.currentTime = seek.ms / 1000;
    void player.play().catch(() => undefined);
  }, [seek, source]);

  const paths = useMemo(() => source && [wavePath(source.levels[0]), wavePath(source.levels[1])], [source]);
  if (!recording) return null;
  if (!ready) return <Status>Recording {recording.status}{recording.status === 'uploading' ? ': it is being stored' : ''}.</Status>;
  if (error) return <p className="bad" role="alert">{errorText(error)}</p>;
  if (!source || !paths) return <Status>Loading the recording…</Status>;
  const x = recording.durationMs ? (position / recording.durationMs) * COLUMNS : 0;
  return (
    <div className="recording">
      <audio ref={audio} controls src={source.url} onTimeUpdate={(e) => setPosition(e.currentTarget.currentTime * 1000)} aria-label="Call recording" />
      <svg className="waves" viewBox={`0 0 ${COLUMNS} 2`} preserveAspectRatio="none" role="img"
        aria-label={`Both channels of the recording: the caller above, the assistant below, ${(recording.durationMs / 1000).toFixed(1)} s`}>
        <path className="wave-caller" d={paths[0]} transform="translate(0 0)" />
        <path className="wave-assistant" d={paths[1]} transform="translate(0 1)" />
        <line className="playhead" x1={x} x2={x} y1={0} y2={2} />
      </svg>
      <p className="note legend"><span className="key-caller">caller</span> · <span className="key-assistant">assistant</span> · {recording.sampleRate / 1000} kHz stereo</p>
    </div>
  );
}
