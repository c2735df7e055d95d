import { useEffect, useRef } from 'preact/hooks';
import uPlot from 'uplot';
import 'uplot/dist/uPlot.min.css';

export interface ChartSeries {
  label: string;
  values: number[];
}

/** A uPlot line chart of series over shared times (epoch seconds); redrawn when the data changes. */
export function TimeChart({ title, times, series, unit }: { title: string; times: number[]; series: ChartSeries[]; unit: string }) {
  const box = useRef<HTMLDivElement>(null);
  useEffect(() => {
    const el = box.current;
    if (!el) return;
    const colors = ['#1f5fa8', '#b4461f', '#2e7d32', '#6a3d9a', '#8c6d00', '#555555'];
    const plot = new uPlot(
      {
        width: Math.max(320, el.clientWidth || 640),
        height: 240,
        axes: [{}, { label: unit, size: 70 }],
        series: [{}, ...series.map((s, i) => ({ label: s.label, stroke: colors[i % colors.length], width: 2 }))],
      },
      [times, ...series.map((s) => s.values)],
      el,
    );
    return () => plot.destroy();
  }, [times, series, unit]);
  return <figure class="chart" aria-label={title} ref={box} />;
}

/** Horizontal bars, one per row: plain elements, so the numbers are text a reader (and a test) can read. */
export function Bars({ title, rows }: { title: string; rows: { label: string; value: number; text: string }[] }) {
  const max = Math.max(1, ...rows.map((r) => r.value));
  return (
    <figure class="bars" aria-label={title}>
      <figcaption>{title}</figcaption>
      {rows.map((r) => (
        <div class="bar-row" key={r.label}>
          <span class="bar-label">{r.label}</span>
          <span class="bar-track">
            <span class="bar" style={{ width: `${(100 * r.value) / max}%` }} />
          </span>
          <span class="bar-value">{r.text}</span>
        </div>
      ))}
      {rows.length === 0 ? <p>No flows in this range.</p> : null}
    </figure>
  );
}
