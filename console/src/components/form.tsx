import { useId, type InputHTMLAttributes, type ReactNode, type SelectHTMLAttributes, type TextareaHTMLAttributes } from 'react';
import { ApiError, errorText, type FieldError } from '../api/client';

/** The API's field errors whose path is `path` exactly (a form shows each at its field). */
export function errorsAt(details: readonly FieldError[], path: string): string[] {
  return details.filter((d) => d.path === path).map((d) => d.message);
}

/** Errors under a path prefix, and those that no field of the form claims. */
export function detailsOf(error: unknown): FieldError[] {
  return error instanceof ApiError ? error.details : [];
}

interface FieldProps {
  label: string;
  errors?: readonly string[] | undefined;
  hint?: ReactNode;
  children: (props: { id: string; 'aria-invalid': boolean; 'aria-describedby': string | undefined }) => ReactNode;
}

/** A labelled control with its hint and the API's errors tied to it (aria-describedby), shown right under it. */
export function Field({ label, errors = [], hint, children }: FieldProps) {
  const id = useId();
  const describedBy = [hint ? `${id}-hint` : '', errors.length ? `${id}-error` : ''].filter(Boolean).join(' ') || undefined;
  return (
    <div className={errors.length ? 'field invalid' : 'field'}>
      <label htmlFor={id}>{label}</label>
      {children({ id, 'aria-invalid': errors.length > 0, 'aria-describedby': describedBy })}
      {hint && <small id={`${id}-hint`} className="hint">{hint}</small>}
      {errors.length > 0 && <span id={`${id}-error`} className="field-error" role="alert">{errors.join('; ')}</span>}
    </div>
  );
}

type Common = { label: string; errors?: readonly string[] | undefined; hint?: ReactNode };

export function TextField({ label, errors, hint, ...input }: Common & InputHTMLAttributes<HTMLInputElement>) {
  return <Field label={label} errors={errors} hint={hint}>{(a) => <input {...input} {...a} />}</Field>;
}

export function TextArea({ label, errors, hint, ...input }: Common & TextareaHTMLAttributes<HTMLTextAreaElement>) {
  return <Field label={label} errors={errors} hint={hint}>{(a) => <textarea {...input} {...a} />}</Field>;
}

export function SelectField({ label, errors, hint, children, ...input }: Common & SelectHTMLAttributes<HTMLSelectElement>) {
  return <Field label={label} errors={errors} hint={hint}>{(a) => <select {...input} {...a}>{children}</select>}</Field>;
}

/** A failed request, said in words; field errors no field claimed are listed with their path. */
export function ErrorBox({ error, claimed = [] }: { error: unknown; claimed?: readonly string[] }) {
  if (!error) return null;
  const rest = detailsOf(error).filter((d) => !claimed.some((c) => d.path === c || d.path.startsWith(`${c}.`)));
  return (
    <div className="error-box" role="alert">
      <p>{errorText(error)}</p>
      {rest.length > 0 && <ul>{rest.map((d, i) => <li key={i}><code>{d.path}</code> {d.message}</li>)}</ul>}
    </div>
  );
}

export function Status({ children }: { children: ReactNode }) {
  return <p role="status" className="note">{children}</p>;
}

/** A name the API would take: not empty, not only spaces (said in words before any request). */
export function nameProblem(name: string, label = 'Name'): string[] {
  return name.trim() ? [] : [`${label} is required.`];
}
