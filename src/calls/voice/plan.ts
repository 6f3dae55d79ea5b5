import type { LookupFunction } from 'node:net';
import type { AudioFormat } from '../../voice/audio/format.ts';
import type { SttProviderName } from '../../voice/stt/stt.ts';
import type { TtsProviderName, VoiceSettings } from '../../voice/tts/index.ts';
import type { RealtimeSessionSettings, RealtimeVad } from '../../voice/realtime/session-config.ts';
import type { VadSettings } from '../../voice/vad.ts';
import type { TurnSettings } from '../turns/settings.ts';
import type { CallFailure } from '../failure.ts';

/** Where a provider is reached, and with which key (null: none is sent). */
export interface ProviderAccess {
  apiKey: string | null;
  baseUrl: string;
  /** Set when the base URL is a tenant's: every connection resolves its host through the egress policy. */
  lookup?: LookupFunction | undefined;
}

/** How a voice call sounds and listens, from its strategy and the organization's provider keys. */
export type VoicePlan =
  | {
      kind: 'pipeline';
      audio: AudioFormat;
      vad: VadSettings;
      turn: TurnSettings;
      tts: { provider: TtsProviderName; access: ProviderAccess; voice: VoiceSettings };
      stt: { provider: SttProviderName; access: ProviderAccess; model?: string; language?: string };
    }
  | {
      kind: 'realtime';
      audio: AudioFormat;
      /** Only what the strategy sets: the server VAD's own defaults apply to the rest. */
      vad: RealtimeVad;
      /** smart endpointing: the model's semantic VAD, as eager as the strategy's maxSilence; vad: the server VAD. */
      turns: RealtimeSessionSettings['turns'];
      access: ProviderAccess;
      model: string;
      voice: VoiceSettings;
      transcriptionModel?: string;
      language?: string;
    }
  /** The plan cannot work (a provider without a key, one Parley cannot speak with): the call fails at start, saying why. */
  | { kind: 'unusable'; audio: AudioFormat; failure: CallFailure };
