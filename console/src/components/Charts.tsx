/**
 * Plain SVG charts: the console needs stacked bars and a funnel, which a few lines draw; a chart
 * library would cost more bundle than the pages that use it (see docs/console.md).
 */
export interface Series {
  key: string;
  label: string;
  className: string;
}

interface BarsProps {
  title: string;
  rows: { label: string; values: Record<string, number> }[];
  series: Series[];
}

/** Stacked bars, one per row, with a legend and a table fallback for screen readers. */
export function StackedBars({ title, rows, series }: BarsProps) {
  const width = 640;
  const height = 200;
  const max = Math.max(1, ...rows.map((r) => series.reduce((sum, s) => sum + (r.values[s.key] ?? 0), 0)));
  const slot = width / Math.max(1, rows.length);
  const bar = Math.max(2, slot * 0.7);
  return (
    <figure className="chart">
      <svg viewBox={`0 0 ${width} ${height + 20}`} role="img" aria-label={title} preserveAspectRatio="none">
        <line x1="0" y1={height} x2={width} y2={height} className="axis" />
        {rows.map((row, i) => {
          let y = height;
          return (
            <g key={row.label}>
              {series.map((s) => {
                const h = ((row.values[s.key] ?? 0) / max) * (height - 10);
                y -= h;
                return h > 0 ? <rect key={s.key} x={i * slot + (slot - bar) / 2} y={y} width={bar} height={h} className={s.className} /> : null;
              })}
            </g>
          );
        })}
      </svg>
      <figcaption>
        {title} <span className="legend">{series.map((s) => <span key={s.key}><i className={`swatch ${s.className}`} /> {s.label}</span>)}</span>
      </figcaption>
    </figure>
  );
}

/** Each stage as a bar of its share of the first, with its count. */
export function Funnel({ title, stages }: { title: string; stages: { label: string; value: number }[] }) {
  const first = Math.max(1, stages[0]?.value ?? 0);
  return (
    <figure className="chart funnel">
      <figcaption>{title}</figcaption>
      <ol>
        {stages.map((s) => (
          <li key={s.label}>
            <span className="funnel-label">{s.label}</span>
            <svg viewBox="0 0 100 8" preserveAspectRatio="none" aria-hidden="true">
              <rect x="0" y="0" width={Math.max(0.5, (s.value / first) * 100)} height="8" className="s-completed" />
            </svg>
            <span className="funnel-value">{s.value}</span>
          </li>
        ))}
      </ol>
    </figure>
  );
}

export function Stat({ label, value }: { label: string; value: string }) {
  return (
    <div className="stat">
      <span className="stat-value">{value}</span>
      <span className="stat-label">{label}</span>
    </div>
  );
}
