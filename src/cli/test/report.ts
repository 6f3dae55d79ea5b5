import type { TestResult } from '../../calls/testing/run.ts';

/** A test's lines of the report: PASS or FAIL, then every failed check and every judge's verdict with its reason. */
export function reportTest(r: TestResult): string {
  const head = `  ${r.passed ? 'PASS' : 'FAIL'}  ${r.name}  (${(r.ms / 1000).toFixed(1)} s, call ${r.callId ?? 'not started'})`;
  const lines = r.checks
    .filter((c) => !c.passed || c.what.startsWith('judged:'))
    .map((c) => `        ${c.passed ? 'ok  ' : 'FAIL'}  ${c.what}${c.detail ? `\n              ${c.detail}` : ''}`);
  if (!r.passed) lines.push('        conversation:', ...r.transcript.map((l) => `          ${l.role}: ${l.text.replace(/\n/g, ' ')}`));
  return [head, ...lines].join('\n');
}

export function summary(results: readonly TestResult[]): string {
  const failed = results.filter((r) => !r.passed).length;
  return `\n${results.length} tests: ${results.length - failed} passed, ${failed} failed`;
}
