import type { AudioFormat } from '../../voice/audio/format.ts';
import type { VoiceSettings } from '../../voice/tts/index.ts';
import type { RealtimeSessionSettings, RealtimeVad } from '../../voice/realtime/session-config.ts';
import type { VadSettings } from '../../voice/vad.ts';
import type { TurnSettings } from '../turns/settings.ts';
import type { CallFailure } from '../failure.ts';
import type { ProviderAccess } from '../providers/access.ts';
import type { ProviderName } from '../providers/registry.ts';

/** A voice: the provider, where it is reached, and the strategy's voice settings for it. */
export interface TtsChoice {
  provider: ProviderName;
  access: ProviderAccess;
  voice: VoiceSettings;
}

/** A transcriber: the provider, where it is reached, its model and language when the strategy names them. */
export interface SttChoice {
  provider: ProviderName;
  access: ProviderAccess;
  model?: string;
  language?: string;
}

/** How a voice call sounds and listens, from its strategy and the organization's provider keys. */
export type VoicePlan =
  | {
      kind: 'pipeline';
      audio: AudioFormat;
      vad: VadSettings;
      turn: TurnSettings;
      tts: TtsChoice;
      stt: SttChoice;
      /** The strategy's fallbacks, in the order they take over. */
      fallbacks?: { tts: TtsChoice[]; stt: SttChoice[] };
    }
  | {
      kind: 'realtime';
      /** The provider of the realtime model (the registry's one with `realtime`). */
      provider: ProviderName;
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
