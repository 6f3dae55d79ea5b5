import { useEffect, useState, type FormEvent } from 'react';
import { useNavigate, useParams } from 'react-router';
import { inOrganization } from '../api/client';
import { bodySchema, schemaAt, useDocument, type JsonSchema } from '../api/document';
import type { Strategy, StrategyWrite } from '../api/types';
import { detailsOf, ErrorBox, errorsAt, SelectField, Status, TextField } from '../components/form';
import { Slider } from '../components/Slider';
import { useLoad, useTitle } from '../hooks';
import { useCan, useScope, useSession } from '../session';

const CREATE_PATH = '/api/v1/vendors/{vendorId}/organizations/{organizationId}/llm-generation-strategies';
type Params = StrategyWrite['parameters'];
const empty: StrategyWrite = { name: '', type: 'text_to_speech', parameters: {} };

const VOICE_SLIDERS = [['speed', 'Speed', '×'], ['stability', 'Stability', ''], ['similarityBoost', 'Similarity boost', ''], ['style', 'Style', '']] as const;
const VAD_SLIDERS = [
  ['confidenceThreshold', 'Confidence threshold', ''], ['minVolume', 'Minimum volume', ''],
  ['startDuration', 'Start duration', ' s'], ['stopDuration', 'Stop duration', ' s'], ['backbufferDuration', 'Backbuffer duration', ' s'],
] as const;

const SHOWN_AT_FIELDS = ['name', 'type', 'parameters.model', 'parameters.temperature', ...VOICE_SLIDERS.map(([k]) => `parameters.voice.${k}`), ...VAD_SLIDERS.map(([k]) => `parameters.vad.${k}`)];

const options = (schema: JsonSchema | undefined) => (schema?.enum ?? []).map(String);

/** A strategy: the model, temperature and the voice and VAD settings, each slider bound to the range the API accepts. */
export default function StrategyPage() {
  const { id = 'new' } = useParams();
  const isNew = id === 'new';
  const { api } = useSession();
  const writable = useCan()('strategies:write');
  const scope = useScope();
  const navigate = useNavigate();
  const doc = useDocument();
  const [form, setForm] = useState<StrategyWrite>(empty);
  const [error, setError] = useState<unknown>(null);
  const [saved, setSaved] = useState('');
  const loaded = useLoad<Strategy | null>(
    async () => (isNew ? null : inOrganization(api, scope).getLlmGenerationStrategy({ path: { strategyId: id } })),
    [api, scope, id],
  );
  useEffect(() => {
    if (loaded.data) setForm({ name: loaded.data.name, type: loaded.data.type, parameters: loaded.data.parameters });
  }, [loaded.data]);
  useTitle(isNew ? 'New strategy' : loaded.data?.name ?? 'Strategy');

  const schema = doc.data ? bodySchema(doc.data, CREATE_PATH, 'post') : undefined;
  const at = (...path: string[]) => schemaAt(schema, path);
  const details = detailsOf(error);
  const p = form.parameters;
  const setParams = (patch: Partial<Params>) => setForm((f) => ({ ...f, parameters: { ...f.parameters, ...patch } }));
  const setVoice = (patch: Partial<NonNullable<Params['voice']>>) => setParams({ voice: { ...p.voice, ...patch } });
  const setVad = (patch: Partial<NonNullable<Params['vad']>>) => setParams({ vad: { ...p.vad, ...patch } });

  const save = async (event: FormEvent) => {
    event.preventDefault();
    setError(null);
    setSaved('');
    try {
      if (isNew) {
        const created = await inOrganization(api, scope).createLlmGenerationStrategy({ body: form });
        void navigate(`/strategies/${created.id}`, { replace: true });
        return;
      }
      await inOrganization(api, scope).updateLlmGenerationStrategy({ path: { strategyId: id }, body: form });
      setSaved('Saved.');
    } catch (e) {
      setError(e);
    }
  };

  if (loaded.error) return <ErrorBox error={loaded.error} />;
  if (!schema) return doc.error ? <ErrorBox error={doc.error} /> : <Status>Loading…</Status>;
  return (
    <>
      <h1>{isNew ? 'New strategy' : form.name || 'Strategy'}</h1>
      <form className="editor" onSubmit={(e) => void save(e)} noValidate>
        <section className="card" aria-labelledby="llm">
          <h2 id="llm">LLM</h2>
          <div className="grid2">
            <TextField label="Name" value={form.name} onChange={(e) => setForm({ ...form, name: e.target.value })} errors={errorsAt(details, 'name')} />
            <SelectField label="Type" value={form.type} onChange={(e) => setForm({ ...form, type: e.target.value as StrategyWrite['type'] })} errors={errorsAt(details, 'type')}>
              {options(at('type')).map((t) => <option key={t} value={t}>{t}</option>)}
            </SelectField>
            <TextField label="Model" value={p.model ?? ''} placeholder="service default" onChange={(e) => setParams({ model: e.target.value || undefined })} errors={errorsAt(details, 'parameters.model')} />
            <SelectField label="Output sample rate (Hz)" value={p.outputSampleRate ?? ''} onChange={(e) => setParams({ outputSampleRate: (e.target.value ? Number(e.target.value) : undefined) as Params['outputSampleRate'] })}>
              <option value="">default</option>
              {options(at('parameters', 'outputSampleRate')).map((r) => <option key={r} value={r}>{r}</option>)}
            </SelectField>
          </div>
          <Slider label="Temperature" schema={at('parameters', 'temperature')} value={p.temperature} onChange={(temperature) => setParams({ temperature })} errors={errorsAt(details, 'parameters.temperature')} />
        </section>
        <section className="card" aria-labelledby="voice">
          <h2 id="voice">Voice</h2>
          <div className="grid2">
            <SelectField label="Provider" value={p.voice?.provider ?? ''} onChange={(e) => setVoice({ provider: (e.target.value || undefined) as never })}>
              <option value="">default (espeak)</option>
              {options(at('parameters', 'voice', 'provider')).map((v) => <option key={v} value={v}>{v}</option>)}
            </SelectField>
            <TextField label="Voice id" value={p.voice?.voiceId ?? ''} onChange={(e) => setVoice({ voiceId: e.target.value || undefined })} />
            <TextField label="Voice model id" value={p.voice?.modelId ?? ''} onChange={(e) => setVoice({ modelId: e.target.value || undefined })} />
            <label className="check"><input type="checkbox" checked={p.voice?.useSpeakerBoost ?? false} onChange={(e) => setVoice({ useSpeakerBoost: e.target.checked })} /> Speaker boost</label>
          </div>
          {VOICE_SLIDERS.map(([key, label, unit]) => (
            <Slider key={key} label={label} unit={unit} schema={at('parameters', 'voice', key)} value={p.voice?.[key]} onChange={(v) => setVoice({ [key]: v })} errors={errorsAt(details, `parameters.voice.${key}`)} />
          ))}
        </section>
        <section className="card" aria-labelledby="vad">
          <h2 id="vad">Turn detection (VAD)</h2>
          {VAD_SLIDERS.map(([key, label, unit]) => (
            <Slider key={key} label={label} unit={unit} schema={at('parameters', 'vad', key)} value={p.vad?.[key]} onChange={(v) => setVad({ [key]: v })} errors={errorsAt(details, `parameters.vad.${key}`)} />
          ))}
        </section>
        <div className="save-bar">
          <button type="submit" className="primary" disabled={!writable}>{isNew ? 'Create strategy' : 'Save'}</button>
          {!writable && <span className="note">Read only: this token may not change strategies.</span>}
          {saved && <span role="status">{saved}</span>}
        </div>
        <ErrorBox error={error} claimed={SHOWN_AT_FIELDS} />
      </form>
    </>
  );
}
