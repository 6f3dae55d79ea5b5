import type { FieldError } from '../api/client';
import { errorsAt, Field, SelectField, TextArea, TextField } from '../components/form';
import { MASK, newKey, newParam, PROPERTY_TYPES, type HeaderForm, type ParamForm, type PropertyType, type ToolForm } from './draft';
import { ToolTest } from './ToolTest';

interface Props {
  tool: ToolForm;
  /** extensions[i]: where the API's errors for this tool are. */
  index: number;
  errors: readonly FieldError[];
  onChange: (tool: ToolForm) => void;
  onRemove: () => void;
  /** Set once the tool is saved: the test request needs its id. */
  test?: { kind: 'assistant' | 'agent'; ownerId: string } | undefined;
}

/** One tool_webhook, built with a form: name, description, URL, headers and typed parameters; the spec is made from them. */
export function ToolEditor({ tool, index, errors, onChange, onRemove, test }: Props) {
  const at = (field: string) => errorsAt(errors, `extensions[${index}].parameters.${field}`);
  const set = (patch: Partial<ToolForm>) => onChange({ ...tool, ...patch });
  const setParam = (key: string, patch: Partial<ParamForm>) => set({ params: tool.params.map((p) => (p.key === key ? { ...p, ...patch } : p)) });
  const setHeader = (key: string, patch: Partial<HeaderForm>) => set({ headers: tool.headers.map((h) => (h.key === key ? { ...h, ...patch } : h)) });
  const schemaErrors = [...at('schema'), ...errorsAt(errors, `extensions[${index}]`)];
  const title = tool.name || `Tool ${index + 1}`;

  return (
    <fieldset className="tool">
      <legend>{title}</legend>
      <div className="grid2">
        <TextField label="Tool name" value={tool.name} onChange={(e) => set({ name: e.target.value })} errors={at('name')} hint="Seen by the LLM: letters, digits, _ or -" />
        <TextField label="Server URL" type="url" value={tool.serverUrl} onChange={(e) => set({ serverUrl: e.target.value })} errors={at('serverUrl')} hint="Receives the POST of each tool call" />
      </div>
      <TextArea label="Description" rows={2} value={tool.description} onChange={(e) => set({ description: e.target.value })} hint="Tells the LLM when to use the tool" />
      <TextField label="Timeout (seconds)" inputMode="numeric" value={tool.timeoutSeconds} onChange={(e) => set({ timeoutSeconds: e.target.value })} errors={at('timeoutSeconds')} hint="1 to 60; 10 when empty" />

      <fieldset className={schemaErrors.length ? 'params invalid' : 'params'}>
        <legend>Parameters</legend>
        {tool.params.length === 0 && <p className="note">No parameters: the tool is called without arguments.</p>}
        {tool.params.map((p, i) => (
          <div className="param-row" key={p.key}>
            <TextField label={`Parameter ${i + 1} name`} value={p.name} onChange={(e) => setParam(p.key, { name: e.target.value })} />
            <SelectField label="Type" value={p.type} onChange={(e) => setParam(p.key, { type: e.target.value as PropertyType })}>
              {PROPERTY_TYPES.map((t) => <option key={t} value={t}>{t}</option>)}
            </SelectField>
            <TextField label="Description" value={p.description} onChange={(e) => setParam(p.key, { description: e.target.value })} />
            <label className="check"><input type="checkbox" checked={p.required} onChange={(e) => setParam(p.key, { required: e.target.checked })} /> Required</label>
            <button type="button" className="ghost" onClick={() => set({ params: tool.params.filter((x) => x.key !== p.key) })} aria-label={`Remove parameter ${p.name || i + 1}`}>Remove</button>
          </div>
        ))}
        <button type="button" onClick={() => set({ params: [...tool.params, newParam()] })}>Add parameter</button>
        {schemaErrors.length > 0 && <p className="field-error" role="alert">{schemaErrors.join('; ')}</p>}
      </fieldset>

      <fieldset className="headers">
        <legend>Headers</legend>
        <p className="note">Sent on every request. Values are write-only: a saved value shows as {MASK} and stays unless you replace it.</p>
        {tool.headers.map((h) => (
          <div className="header-row" key={h.key}>
            <TextField label="Header name" value={h.name} onChange={(e) => setHeader(h.key, { name: e.target.value })} errors={at(`headers.${h.name}`)} />
            {h.stored
              ? (
                <Field label="Value">{(a) => (
                  <span className="masked">
                    <input {...a} value={MASK} readOnly />
                    <button type="button" onClick={() => setHeader(h.key, { stored: false, value: '' })}>Replace</button>
                  </span>
                )}</Field>
              )
              : <TextField label="Value" type="password" autoComplete="off" value={h.value} onChange={(e) => setHeader(h.key, { value: e.target.value })} />}
            <button type="button" className="ghost" onClick={() => set({ headers: tool.headers.filter((x) => x.key !== h.key) })} aria-label={`Remove header ${h.name}`}>Remove</button>
          </div>
        ))}
        <button type="button" onClick={() => set({ headers: [...tool.headers, { key: newKey(), name: '', value: '', stored: false }] })}>Add header</button>
      </fieldset>

      <div className="row">
        <button type="button" className="danger" onClick={onRemove}>Remove tool</button>
      </div>
      {test && tool.id && <ToolTest kind={test.kind} ownerId={test.ownerId} tool={tool} />}
    </fieldset>
  );
}
