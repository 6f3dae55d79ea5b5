import { useId } from 'react';
import type { JsonSchema } from '../api/document';

interface Props {
  label: string;
  /** The property's schema from the served OpenAPI document: its minimum and maximum bound the slider. */
  schema: JsonSchema | undefined;
  value: number | undefined;
  unit?: string;
  errors?: readonly string[];
  onChange: (value: number | undefined) => void;
}

/** An optional number on a slider bound to the API's own range; unticked, the value is left out (the service default). */
export function Slider({ label, schema, value, unit = '', errors = [], onChange }: Props) {
  const id = useId();
  const min = schema?.minimum ?? 0;
  const max = schema?.maximum ?? 1;
  const step = schema?.type === 'integer' ? 1 : (max - min) / 100;
  const shown = value ?? min;
  return (
    <div className={errors.length ? 'field slider invalid' : 'field slider'}>
      <label className="check">
        <input type="checkbox" checked={value !== undefined} onChange={(e) => onChange(e.target.checked ? (min + max) / 2 : undefined)} />
        {' '}Set {label.toLowerCase()}
      </label>
      <label htmlFor={id}>{label}</label>
      <div className="slider-row">
        <span aria-hidden="true">{min}</span>
        <input
          id={id} type="range" min={min} max={max} step={step} value={shown} disabled={value === undefined}
          aria-valuetext={value === undefined ? 'not set' : `${value}${unit}`}
          aria-describedby={errors.length ? `${id}-error` : undefined}
          onChange={(e) => onChange(Number(e.target.value))}
        />
        <span aria-hidden="true">{max}</span>
        <output htmlFor={id}>{value === undefined ? 'default' : `${Number(shown.toFixed(2))}${unit}`}</output>
      </div>
      {errors.length > 0 && <span id={`${id}-error`} className="field-error" role="alert">{errors.join('; ')}</span>}
    </div>
  );
}
