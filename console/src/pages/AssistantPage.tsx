import { useEffect, useState, type FormEvent } from 'react';
import { Link, useNavigate, useParams } from 'react-router';
import { ApiError, inOrganization } from '../api/client';
import { plural, type Assistant, type Kind } from '../api/types';
import { bodyOf, draftOf, emptyDraft, newTool, type Draft, type ToolForm } from '../assistant/draft';
import { AfterCallEditor } from '../assistant/AfterCallEditor';
import { HooksEditor } from '../assistant/HooksEditor';
import { Placeholders } from '../assistant/Placeholders';
import { TestCall } from '../assistant/TestCall';
import { ToolEditor } from '../assistant/ToolEditor';
import { detailsOf, ErrorBox, errorsAt, SelectField, Status, TextArea, TextField } from '../components/form';
import { useLoad, useTitle } from '../hooks';
import { useCan, useScope, useSession } from '../session';

const TOP_FIELDS = ['name', 'systemPrompt', 'systemPromptGreeting', 'llmAudioContentGenerationStrategyId', 'telephoneNumberId', 'recording', 'analysis'];

/** An assistant or agent: its prompt, greeting, strategy, number, tools and hooks, and a test call. */
export default function AssistantPage({ kind }: { kind: Kind }) {
  const { id = 'new' } = useParams();
  const isNew = id === 'new';
  const { api } = useSession();
  const can = useCan();
  const writable = can(`${plural(kind)}:write`);
  const scope = useScope();
  const navigate = useNavigate();
  const [draft, setDraft] = useState<Draft>(emptyDraft);
  const [error, setError] = useState<unknown>(null);
  const [saved, setSaved] = useState('');
  const [busy, setBusy] = useState(false);

  const loaded = useLoad<Assistant | null>(async () => {
    if (isNew) return null;
    const org = inOrganization(api, scope);
    return kind === 'agent' ? org.getAgent({ path: { agentId: id } }) : org.getAssistant({ path: { assistantId: id } });
  }, [api, scope, kind, id]);
  const options = useLoad(async () => {
    const query = { size: 100 };
    const org = inOrganization(api, scope);
    const [strategies, numbers] = await Promise.all([org.listLlmGenerationStrategies({ query }), org.listSipNumbers({ query })]);
    return { strategies: strategies.data, numbers: numbers.data };
  }, [api, scope]);

  useEffect(() => {
    setDraft(loaded.data ? draftOf(loaded.data) : emptyDraft());
    setError(null);
  }, [loaded.data]);

  const title = isNew ? `New ${kind}` : loaded.data?.name ?? (kind === 'agent' ? 'Agent' : 'Assistant');
  useTitle(title);
  const details = detailsOf(error);
  const set = (patch: Partial<Draft>) => setDraft((d) => ({ ...d, ...patch }));

  const save = async (event: FormEvent) => {
    event.preventDefault();
    setBusy(true);
    setError(null);
    setSaved('');
    const body = bodyOf(draft);
    try {
      const org = inOrganization(api, scope);
      if (isNew) {
        const created = kind === 'agent' ? await org.createAgent({ body }) : await org.createAssistant({ body });
        void navigate(`/${plural(kind)}/${created.id}`, { replace: true });
        return;
      }
      await (kind === 'agent' ? org.updateAgent({ path: { agentId: id }, body }) : org.updateAssistant({ path: { assistantId: id }, body }));
      setSaved('Saved.');
      loaded.reload();
    } catch (e) {
      setError(e);
    } finally {
      setBusy(false);
    }
  };

  if (loaded.error) return <ErrorBox error={loaded.error} />;
  if (!isNew && !loaded.data) return <Status>Loading…</Status>;
  const claimed = [...TOP_FIELDS, ...draft.extensions.map((_, i) => `extensions[${i}]`), ...draft.hooks.map((_, i) => `callEventHooks[${i}]`)];

  return (
    <>
      <div className="page-head">
        <h1>{title}</h1>
        {!isNew && (
          <div className="row">
            <Link className="button" to={`/${plural(kind)}/${id}/history`}>History</Link>
            <Link className="button" to={`/${plural(kind)}/${id}/tests`}>Tests</Link>
            {kind === 'agent' && <Link className="button" to={`/agents/${id}/tasks`}>Tasks</Link>}
          </div>
        )}
      </div>
      <form className="editor" onSubmit={(e) => void save(e)} noValidate>
        <section className="card" aria-labelledby="basics">
          <h2 id="basics">Behaviour</h2>
          <TextField label="Name" value={draft.name} onChange={(e) => set({ name: e.target.value })} errors={errorsAt(details, 'name')} required />
          <TextArea label="System prompt" rows={6} value={draft.systemPrompt} onChange={(e) => set({ systemPrompt: e.target.value })} errors={errorsAt(details, 'systemPrompt')} />
          <Placeholders text={draft.systemPrompt} label="System prompt" />
          <TextArea label="Greeting" rows={2} value={draft.systemPromptGreeting} onChange={(e) => set({ systemPromptGreeting: e.target.value })} errors={errorsAt(details, 'systemPromptGreeting')} hint="Spoken first. {{name}} placeholders are filled from the call's userValues." />
          <Placeholders text={draft.systemPromptGreeting} label="Greeting" />
          <div className="grid2">
            <SelectField label="Strategy" value={draft.strategyId} onChange={(e) => set({ strategyId: e.target.value })} errors={errorsAt(details, 'llmAudioContentGenerationStrategyId')}>
              <option value="">None (service default)</option>
              {(options.data?.strategies ?? []).map((s) => <option key={s.id} value={s.id}>{s.name}</option>)}
            </SelectField>
            <SelectField label="Phone number" value={draft.numberId} onChange={(e) => set({ numberId: e.target.value })} errors={errorsAt(details, 'telephoneNumberId')}>
              <option value="">None</option>
              {(options.data?.numbers ?? []).map((n) => <option key={n.id} value={n.id}>{n.name ? `${n.name} (${n.number})` : n.number}</option>)}
            </SelectField>
          </div>
        </section>

        <section className="card" aria-labelledby="tools">
          <h2 id="tools">Tools</h2>
          {draft.extensions.map((item, index) => item.kind === 'tool'
            ? (
              <ToolEditor
                key={item.key} tool={item} index={index} errors={details}
                onChange={(tool: ToolForm) => set({ extensions: draft.extensions.map((x) => (x.key === item.key ? tool : x)) })}
                onRemove={() => set({ extensions: draft.extensions.filter((x) => x.key !== item.key) })}
                test={isNew || !writable ? undefined : { kind, ownerId: id }}
              />
            )
            : <p key={item.key} className="note">Extension <code>{item.value.type}</code> is kept as it is.</p>)}
          <button type="button" onClick={() => set({ extensions: [...draft.extensions, newTool()] })}>Add tool</button>
        </section>

        <section className="card" aria-labelledby="after-call">
          <AfterCallEditor recording={draft.recording} analysis={draft.analysis} errors={details} onChange={(patch) => set(patch)} />
        </section>
        <section className="card">
          <HooksEditor hooks={draft.hooks} errors={details} onChange={(hooks) => set({ hooks })} />
        </section>

        <div className="save-bar">
          <button type="submit" className="primary" disabled={busy || !writable}>{isNew ? `Create ${kind}` : 'Save'}</button>
          {!writable && <span className="note">Read only: this token may not change {plural(kind)}.</span>}
          {saved && <span role="status">{saved}</span>}
        </div>
        <ErrorBox error={error} claimed={error instanceof ApiError ? claimed : []} />
      </form>
      {!isNew && can('calls:write') && <TestCall kind={kind} ownerId={id} />}
    </>
  );
}
