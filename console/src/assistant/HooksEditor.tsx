import type { FieldError } from '../api/client';
import { errorsAt, Field, SelectField, TextField } from '../components/form';
import { HOOK_TYPES, MASK, newKey, type HookForm } from './draft';

/** Call event hooks: the event, the URL that receives it, and the signing secret (write-only). */
export function HooksEditor({ hooks, errors, onChange }: { hooks: HookForm[]; errors: readonly FieldError[]; onChange: (hooks: HookForm[]) => void }) {
  const set = (key: string, patch: Partial<HookForm>) => onChange(hooks.map((h) => (h.key === key ? { ...h, ...patch } : h)));
  return (
    <fieldset>
      <legend>Call event hooks</legend>
      {hooks.length === 0 && <p className="note">No hooks: nothing is sent when calls start or end.</p>}
      {hooks.map((h, i) => {
        const at = (field: string) => errorsAt(errors, `callEventHooks[${i}].parameters.${field}`);
        return (
          <div className="hook-row" key={h.key}>
            <SelectField label={`Hook ${i + 1} event`} value={h.type} onChange={(e) => set(h.key, { type: e.target.value as HookForm['type'] })} errors={errorsAt(errors, `callEventHooks[${i}].type`)}>
              {HOOK_TYPES.map((t) => <option key={t} value={t}>{t}</option>)}
            </SelectField>
            <TextField label="URL" type="url" value={h.url} onChange={(e) => set(h.key, { url: e.target.value })} errors={at('url')} />
            {h.secret.stored
              ? (
                <Field label="Secret">{(a) => (
                  <span className="masked">
                    <input {...a} value={MASK} readOnly />
                    <button type="button" onClick={() => set(h.key, { secret: { value: '', stored: false } })}>Replace</button>
                  </span>
                )}</Field>
              )
              : <TextField label="Secret" type="password" autoComplete="off" value={h.secret.value} onChange={(e) => set(h.key, { secret: { value: e.target.value, stored: false } })} errors={at('secret')} hint="whsec_… or any text; signs each request" />}
            <button type="button" className="ghost" onClick={() => onChange(hooks.filter((x) => x.key !== h.key))} aria-label={`Remove hook ${i + 1}`}>Remove</button>
          </div>
        );
      })}
      <button type="button" onClick={() => onChange([...hooks, { key: newKey(), id: null, type: 'call_ended', url: '', secret: { value: '', stored: false } }])}>Add hook</button>
    </fieldset>
  );
}
