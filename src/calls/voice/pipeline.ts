import { hideAddresses } from '../../egress/address.ts';
import type { Pacer } from '../../voice/pacer.ts';
import type { SttSession } from '../../voice/stt/stt.ts';
import type { TtsSession } from '../../voice/tts/index.ts';
import type { Vad } from '../../voice/vad.ts';
import type { CallFailure } from '../failure.ts';
import type { AudioLink } from './link.ts';
import { speakApology } from './apology.ts';
import { Listener } from './listener.ts';
import { Speaker } from './speaker.ts';
import { TurnTaker } from './turn-taker.ts';
import type { TurnSettings } from '../turns/settings.ts';
import type { SpeakingVoice, VoiceHost } from './voice.ts';

export interface PipelineParts {
  link: AudioLink;
  pacer: Pacer;
  turn: TurnSettings;
  tts: { session: TtsSession; provider: string };
  stt: { session: SttSession; provider: string };
  vad: Vad;
  /** A local voice (eSpeak) for the apology when the TTS provider is what failed. */
  fallbackTts(): Promise<TtsSession>;
}

/**
 * A provider's failure as the record keeps it: which provider, its status, its words (never a
 * key, and never an IP address: the record is the tenant's, and a socket error names the
 * address its base URL's name resolved to).
 */
export function providerFailure(source: string, error: unknown): CallFailure {
  const { statusCode, message } = (error ?? {}) as { statusCode?: unknown; message?: unknown };
  return {
    source,
    statusCode: typeof statusCode === 'number' ? statusCode : null,
    message: typeof message === 'string' && message ? hideAddresses(message).slice(0, 300) : 'the provider failed',
  };
}

/**
 * The text_to_speech pipeline of a voice call: the caller's audio → VAD → speech-to-text → the
 * session's LLM turn → text-to-speech → the caller, with barge-in. The session drives what is
 * said; the pipeline tells it what the caller said and what the caller heard.
 */
export class VoicePipeline implements SpeakingVoice {
  readonly kind = 'pipeline';
  private speaker: Speaker;
  private readonly listener: Listener;
  private readonly turns: TurnTaker;
  private readonly opened: TtsSession[] = [];

  constructor(private readonly parts: PipelineParts, private readonly host: VoiceHost) {
    this.speaker = new Speaker(parts.link, parts.pacer, parts.tts.session, {
      firstAudio: (id, at) => host.firstAudio(id, at),
      played: (id, heard, interrupted) => host.played(id, heard, interrupted),
      failed: (error) => host.failed(providerFailure(`tts:${parts.tts.provider}`, error)),
    });
    const sttFailed = (error: unknown) => host.failed(providerFailure(`stt:${parts.stt.provider}`, error));
    const clock = parts.pacer.clock;
    this.listener = new Listener(parts.link, parts.vad, parts.stt.session, clock, {
      speechStarted: (audioAt) => this.turns.speechStarted(audioAt),
      interim: (text) => this.turns.interim(text),
      speechEnded: (lastSpeechAt, audioAt) => this.turns.speechEnded(lastSpeechAt, audioAt),
      providerEnded: () => this.turns.providerEnded(),
      failed: sttFailed,
    });
    this.turns = new TurnTaker(parts.turn, this.listener, {
      speaking: () => this.speaker.speaking,
      pause: () => {
        this.speaker.pause();
        parts.link.flushPeer();
      },
      resume: () => this.speaker.resume(),
    }, { ...host, sttFailed }, clock);
  }

  get speaking(): boolean {
    return this.speaker.speaking;
  }

  begin(id: string) {
    return this.speaker.begin(id);
  }

  say(id: string, text: string): void {
    this.speaker.say(id, text);
  }

  interrupt(): void {
    this.speaker.interrupt();
    this.parts.link.flushPeer();
  }

  /** Stops listening and speaking, then says `text` (in the local voice when the TTS provider is what failed). */
  async apologize(text: string, failure: CallFailure): Promise<void> {
    this.listener.close();
    this.turns.close();
    this.speaker.interrupt();
    this.speaker.close();
    let session = this.parts.tts.session;
    if (failure.source.startsWith('tts:')) {
      session = await this.parts.fallbackTts();
      this.opened.push(session);
    }
    const apology = speakApology(this.parts.link, this.parts.pacer, session, text, this.host);
    this.speaker = apology.speaker;
    await apology.done;
  }

  async close(): Promise<void> {
    this.listener.close();
    this.turns.close();
    this.speaker.close();
    await Promise.all([this.parts.tts.session.close(), this.parts.stt.session.close(), ...this.opened.map((s) => s.close())]);
  }
}
