import type { TestResult } from '../../calls/testing/run.ts';

/** Text as XML character data or an attribute value; characters XML 1.0 cannot hold at all are dropped. */
export function xml(text: string): string {
  return text
    // eslint-disable-next-line no-control-regex
    .replace(/[\u0000-\u0008\u000b\u000c\u000e-\u001f\ufffe\uffff]/g, '')
    .replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/"/g, '&quot;').replace(/'/g, '&apos;');
}

const seconds = (ms: number) => (ms / 1000).toFixed(3);

/**
 * The results as JUnit XML, the shape CI servers read (GitLab, Jenkins, GitHub's test reporters):
 * <testsuites> holding one <testsuite> per file, one <testcase> per test, a <failure> for a test
 * that failed (every failed check in its text) and the conversation in <system-out>.
 */
export function junitXml(results: readonly TestResult[]): string {
  const files = [...new Set(results.map((r) => r.file))];
  const total = (rs: readonly TestResult[]) => `tests="${rs.length}" failures="${rs.filter((r) => !r.passed).length}" errors="0" skipped="0" time="${seconds(rs.reduce((s, r) => s + r.ms, 0))}"`;
  const out = ['<?xml version="1.0" encoding="UTF-8"?>', `<testsuites name="parley test" ${total(results)}>`];
  for (const file of files) {
    const mine = results.filter((r) => r.file === file);
    out.push(`  <testsuite name="${xml(file)}" ${total(mine)}>`);
    for (const r of mine) {
      out.push(`    <testcase name="${xml(r.name)}" classname="${xml(file)}" time="${seconds(r.ms)}">`);
      const failed = r.checks.filter((c) => !c.passed);
      if (failed.length) {
        const message = `${failed.length} of ${r.checks.length} checks failed: ${failed[0]?.what ?? ''}`;
        const body = failed.map((c) => `${c.what}${c.detail ? `: ${c.detail}` : ''}`).join('\n');
        out.push(`      <failure message="${xml(message)}" type="AssertionError">${xml(body)}</failure>`);
      }
      const log = [`call ${r.callId ?? '(none)'}, ended: ${r.endReason}`, ...r.transcript.map((l) => `${l.role}: ${l.text}`)].join('\n');
      out.push(`      <system-out>${xml(log)}</system-out>`, '    </testcase>');
    }
    out.push('  </testsuite>');
  }
  out.push('</testsuites>', '');
  return out.join('\n');
}
