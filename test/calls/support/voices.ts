/**
 * The TTS providers of the registry reached over the network, each with its conformance fake
 * (test/voice/fakes/tts/<name>.ts), for the call tests that make every one of them speak on a
 * transport: a provider added to the registry with its fake is tested on every transport.
 */
import { providersOf } from '../../../src/calls/providers/registry.ts';
import type { AudioFormat } from '../../../src/voice/audio/format.ts';
import { bytesToSamples } from '../../../src/voice/audio/pcm.ts';
import type { TtsFake, TtsFakeModule } from '../../voice/fakes/tts/contract.ts';
import { sox } from '../../voice/support/speech.ts';
import type { World } from './world.ts';

export const SPEAKING_PROVIDERS: readonly string[] = providersOf('tts').filter((d) => d.tts.open && d.credential !== null).map((d) => d.name);

export async function startTtsFakeOf(provider: string, apiKey: string, outputSampleRate: number): Promise<TtsFake> {
  const { startTtsFake } = (await import(`../../voice/fakes/tts/${provider}.ts`)) as TtsFakeModule;
  return startTtsFake({ apiKey, outputSampleRate });
}

/**
 * In the organization of `orgPath`: a credential for the provider that reaches its fake, and a
 * strategy that speaks with it (transcribing with openai, which opens no connection until the
 * caller speaks, so a greeting needs nothing else). Answers the strategy's id.
 */
export async function speakingStrategy(w: Pick<World, 'api'>, orgPath: string, provider: string, fake: TtsFake, apiKey: string, outputSampleRate: number): Promise<string> {
  const credential = await w.api('POST', `${orgPath}/provider-credentials`, { provider, apiKey, baseUrl: fake.baseUrl });
  if (credential.status !== 201) throw new Error(`credential: ${JSON.stringify(credential.body)}`);
  const strategy = await w.api('POST', `${orgPath}/llm-generation-strategies`, {
    name: `Speaks with ${provider}`, type: 'text_to_speech',
    parameters: { model: 'test-model', outputSampleRate, voice: { provider, ...fake.voice }, transcriber: { provider: 'openai', language: 'en' } },
  });
  if (strategy.status !== 201) throw new Error(`strategy: ${JSON.stringify(strategy.body)}`);
  return strategy.body.data.id as string;
}

/** A sentence the fake sent, converted by sox (not Parley's resampler) to the rate the caller hears. */
export async function asHeardAt(pcm: Int16Array, fromRate: number, toRate: number): Promise<Int16Array> {
  const format = (sampleRate: number): AudioFormat => ({ encoding: 'pcm_s16le', sampleRate });
  if (fromRate === toRate) return pcm;
  return bytesToSamples(Uint8Array.from(await sox(Buffer.from(pcm.buffer, pcm.byteOffset, pcm.byteLength), format(toRate), format(fromRate))));
}
