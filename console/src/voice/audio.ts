/**
 * Microphone and speaker for a voice test call: getUserMedia into the mic worklet (20 ms frames
 * of PCM s16le at 16 kHz out), and the call's audio frames into the player worklet. The worklets
 * are files Vite emits beside the bundle (`?worker&url`), so they load from the console's own
 * origin under its CSP (script-src 'self'): no inline script, no blob: URL.
 */
import micUrl from './mic.worklet.ts?worker&url';
import playerUrl from './player.worklet.ts?worker&url';
import type { PlayerMessage } from './player.worklet.ts';

export interface VoiceAudio {
  /** One binary frame of the call (PCM s16le, 16 kHz), queued for the speaker. */
  play(frame: ArrayBuffer): void;
  /** Drops the audio queued for the speaker (the caller interrupted the answer). */
  clear(): void;
  setMuted(muted: boolean): void;
  /**
   * Stops the microphone at once and the speaker once it has played what it holds, for at most
   * `drainMs` (0: at once; the call's last words, say a goodbye, are otherwise cut). Idempotent.
   */
  close(drainMs?: number): Promise<void>;
}

export interface VoiceAudioEvents {
  /** A 20 ms frame of the microphone, ready to send. */
  onFrame: (frame: ArrayBuffer) => void;
  /** Samples the speaker has played so far, at `rate`. */
  onPlayed: (played: number, rate: number) => void;
}

/** The microphone could not be opened; the message says why in words a user can act on. */
export class MicrophoneError extends Error {
  override readonly name = 'MicrophoneError';
}

function microphoneMessage(error: unknown): string {
  const name = error instanceof DOMException ? error.name : '';
  if (name === 'NotAllowedError' || name === 'SecurityError') {
    return 'Microphone permission was denied. Allow the microphone for this site in the browser (the icon in the address bar), then press Talk again.';
  }
  if (name === 'NotFoundError' || name === 'OverconstrainedError') return 'No microphone was found. Connect one and press Talk again.';
  if (name === 'NotReadableError') return 'The microphone is in use by another program or could not be started.';
  return `The microphone could not be opened: ${error instanceof Error ? error.message : String(error)}`;
}

/**
 * Asks for the microphone and starts both worklets. Throws MicrophoneError when the browser refuses.
 * `processing`: the browser's echo cancellation, noise suppression and gain control. With
 * speakers they keep the assistant from hearing itself (and stopping at its own voice); they
 * also reshape the signal, so without them the service gets the microphone's samples unchanged.
 */
export async function openVoiceAudio(events: VoiceAudioEvents, processing: boolean): Promise<VoiceAudio> {
  if (!window.isSecureContext || !navigator.mediaDevices?.getUserMedia) {
    throw new MicrophoneError('The microphone needs a secure context: open the console over https, or at localhost or 127.0.0.1.');
  }
  let stream: MediaStream;
  try {
    // The browser's echo cancellation stays on: with speakers, the assistant would otherwise hear itself and stop talking.
    stream = await navigator.mediaDevices.getUserMedia({ audio: { channelCount: 1, echoCancellation: processing, noiseSuppression: processing, autoGainControl: processing } });
  } catch (error) {
    throw new MicrophoneError(microphoneMessage(error));
  }
  const context = new AudioContext({ latencyHint: 'interactive' });
  const stop = async () => {
    stream.getTracks().forEach((track) => track.stop());
    if (context.state !== 'closed') await context.close();
  };
  try {
    await Promise.all([context.audioWorklet.addModule(micUrl), context.audioWorklet.addModule(playerUrl)]);
    const mic = new AudioWorkletNode(context, 'parley-mic', { numberOfInputs: 1, numberOfOutputs: 0 });
    mic.port.onmessage = (event: MessageEvent<ArrayBuffer>) => events.onFrame(event.data);
    context.createMediaStreamSource(stream).connect(mic);
    const player = new AudioWorkletNode(context, 'parley-player', { numberOfInputs: 0, numberOfOutputs: 1, outputChannelCount: [1] });
    let buffered = 0;
    let drained: (() => void) | null = null;
    player.port.onmessage = (event: MessageEvent<PlayerMessage>) => {
      buffered = event.data.buffered;
      events.onPlayed(event.data.played, context.sampleRate);
      if (buffered === 0) drained?.();
    };
    player.connect(context.destination);
    await context.resume();
    let closed = false;
    return {
      play: (frame) => player.port.postMessage(frame, [frame]),
      clear: () => player.port.postMessage('clear'),
      setMuted: (muted) => stream.getAudioTracks().forEach((track) => (track.enabled = !muted)),
      async close(drainMs = 0) {
        if (closed) return;
        closed = true;
        mic.port.onmessage = null;
        stream.getTracks().forEach((track) => track.stop());
        if (drainMs > 0 && buffered > 0) {
          await new Promise<void>((resolve) => {
            drained = resolve;
            setTimeout(resolve, drainMs);
          });
        }
        player.port.onmessage = null;
        await stop();
      },
    };
  } catch (error) {
    await stop();
    throw error;
  }
}
