import type { RealtimeSessionCreateRequest } from 'openai/resources/realtime/realtime';

/**
 * The `session.update` a strategy of type `speech_to_speech` asks for, in the GA Realtime shape
 * (`session.type: "realtime"`, audio config under `audio.input` / `audio.output`).
 */
export interface RealtimeTool {
  name: string;
  description?: string;
  /** JSON Schema of the arguments. */
  parameters: Record<string, unknown>;
}

/** A strategy's `vad` settings (seconds and 0..1, as the strategy API takes them). */
export interface RealtimeVad {
  confidenceThreshold?: number;
  stopDuration?: number;
  backbufferDuration?: number;
}

export interface RealtimeSessionSettings {
  model: string;
  instructions: string;
  voice?: string;
  /** 0.25..1.5 for the Realtime API; clamped. */
  speed?: number;
  tools?: readonly RealtimeTool[];
  vad?: RealtimeVad;
  /**
   * How turns end: `semantic` lets the model judge from the words whether the caller is done
   * (semantic_vad, with the eagerness given), `silence` is the server VAD with the strategy's
   * settings. Default `silence`.
   */
  turns?: { detection: 'semantic'; eagerness: 'low' | 'medium' | 'high' } | { detection: 'silence' };
  /** The model transcribing the caller, so transcripts exist for the call record. */
  transcriptionModel?: string;
  language?: string;
}

export const DEFAULT_REALTIME_MODEL = 'gpt-realtime';
export const DEFAULT_TRANSCRIPTION_MODEL = 'gpt-4o-mini-transcribe';
export const REALTIME_SAMPLE_RATE = 24000;

export function realtimeSessionConfig(settings: RealtimeSessionSettings): RealtimeSessionCreateRequest {
  const vad = settings.vad ?? {};
  const format = { type: 'audio/pcm', rate: REALTIME_SAMPLE_RATE } as const;
  return {
    type: 'realtime',
    model: settings.model,
    instructions: settings.instructions,
    output_modalities: ['audio'],
    audio: {
      input: {
        format,
        // The transcription language is ISO-639-1: a strategy's `en-US` is sent as `en`.
        transcription: { model: settings.transcriptionModel ?? DEFAULT_TRANSCRIPTION_MODEL, ...(settings.language ? { language: settings.language.split('-')[0]! } : {}) },
        // The server answers at the end of each turn and stops its answer when the caller talks over it.
        turn_detection: settings.turns?.detection === 'semantic'
          ? { type: 'semantic_vad', eagerness: settings.turns.eagerness, create_response: true, interrupt_response: true }
          : {
              type: 'server_vad',
              ...(vad.confidenceThreshold !== undefined ? { threshold: vad.confidenceThreshold } : {}),
              ...(vad.backbufferDuration !== undefined ? { prefix_padding_ms: Math.round(vad.backbufferDuration * 1000) } : {}),
              ...(vad.stopDuration !== undefined ? { silence_duration_ms: Math.round(vad.stopDuration * 1000) } : {}),
              create_response: true,
              interrupt_response: true,
            },
      },
      output: {
        format,
        ...(settings.voice ? { voice: settings.voice } : {}),
        ...(settings.speed !== undefined ? { speed: Math.min(1.5, Math.max(0.25, settings.speed)) } : {}),
      },
    },
    tools: (settings.tools ?? []).map((tool) => ({ type: 'function', name: tool.name, description: tool.description ?? '', parameters: tool.parameters })),
    tool_choice: 'auto',
  };
}

/** `wss://…/v1/realtime?model=…` from an OpenAI base URL (`https` -> `wss`, `http` -> `ws`). */
export function realtimeUrl(baseUrl: string, model: string): string {
  const url = new URL(`${baseUrl.replace(/\/+$/, '')}/realtime`);
  url.protocol = url.protocol === 'http:' || url.protocol === 'ws:' ? 'ws:' : 'wss:';
  url.searchParams.set('model', model);
  return url.toString();
}
