import type { FieldError } from '../api/client';
import { errorsAt, SelectField, TextArea, TextField } from '../components/form';
import { RUBRICS, type AnalysisForm } from './draft';

const RUBRIC_LABELS: Record<(typeof RUBRICS)[number], string> = { pass_fail: 'Pass or fail', score_1_10: 'Score from 1 to 10', descriptive: 'A few words' };

/** After the call: recording (both sides, encrypted at rest) and the analysis that fills the conclusion. */
export function AfterCallEditor({ recording, analysis, errors, onChange }: {
  recording: boolean;
  analysis: AnalysisForm;
  errors: readonly FieldError[];
  onChange: (patch: { recording?: boolean; analysis?: AnalysisForm }) => void;
}) {
  const set = (patch: Partial<AnalysisForm>) => onChange({ analysis: { ...analysis, ...patch } });
  const at = (path: string) => errorsAt(errors, `analysis.${path}`);
  return (
    <>
      <h2 id="after-call">After the call</h2>
      <div className="field">
        <label><input type="checkbox" checked={recording} onChange={(e) => onChange({ recording: e.target.checked })} /> Record calls</label>
        <small className="hint">One stereo WAV per voice call (the caller left, the assistant right), encrypted at rest, kept for the retention period.</small>
      </div>
      <div className="field">
        <label><input type="checkbox" checked={analysis.enabled} onChange={(e) => set({ enabled: e.target.checked })} /> Analyse calls</label>
        <small className="hint">After each call, its transcript goes to the LLM, which writes a summary, extracts data and judges success.</small>
      </div>
      {analysis.enabled && (
        <>
          <TextArea label="Summary prompt" rows={2} value={analysis.summaryPrompt} onChange={(e) => set({ summaryPrompt: e.target.value })} errors={at('summary.prompt')} hint="Empty: a two or three sentence summary." />
          <TextArea label="Data schema (JSON Schema)" rows={6} value={analysis.schema} onChange={(e) => set({ schema: e.target.value })}
            errors={errors.filter((d) => d.path.startsWith('analysis.structuredData.schema')).map((d) => `${d.path.slice('analysis.structuredData.schema'.length) || 'schema'} ${d.message}`)}
            hint='Empty: no data extracted. For example {"type": "object", "properties": {"booked": {"type": "boolean"}}}' />
          <TextArea label="Data prompt" rows={2} value={analysis.dataPrompt} onChange={(e) => set({ dataPrompt: e.target.value })} errors={at('structuredData.prompt')} />
          <SelectField label="Success rubric" value={analysis.rubric} onChange={(e) => set({ rubric: e.target.value as AnalysisForm['rubric'] })} errors={at('successEvaluation.rubric')}>
            <option value="">No success evaluation</option>
            {RUBRICS.map((r) => <option key={r} value={r}>{RUBRIC_LABELS[r]}</option>)}
          </SelectField>
          {analysis.rubric && <TextArea label="Success prompt" rows={2} value={analysis.successPrompt} onChange={(e) => set({ successPrompt: e.target.value })} errors={at('successEvaluation.prompt')} />}
          <TextField label="Minimum caller turns" type="number" min={0} value={analysis.minTurns} onChange={(e) => set({ minTurns: e.target.value })} errors={at('minTurns')} hint="Shorter calls are not analysed (default 2)." />
        </>
      )}
    </>
  );
}
