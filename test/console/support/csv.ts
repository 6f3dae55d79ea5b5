/**
 * A CSV of n tasks for the upload; `bad` replaces the targetNumber of the given rows (0-based).
 * The window is the whole day, every day: the walk runs the tasks whatever the hour it runs at.
 */
export function taskCsv(n: number, bad: Record<number, string>): string {
  const lines = ['targetNumber,firstName,allowedHoursBegin,allowedHours,onlyWeekdays,execute'];
  for (let i = 0; i < n; i++) {
    const number = bad[i] ?? `+4930${String(1_000_000 + i)}`;
    lines.push(`${number},Guest ${i + 1},0,24,false,true`);
  }
  return lines.join('\n') + '\n';
}
