import { useMemo } from 'preact/hooks';
import { ErrorNote, useLoad } from '../../ui';
import { loadSeries, loadTop, rowKey, rowRate, type Features, type Row, type SeriesData, type Window } from './data';
import { FlowSankey, rate, TimeSeriesChart, unitLabel, valueText } from './echart';
import { reverseDimension as reverseName } from './filter-text';
import type { Unit, VisualizeState } from './state';

/** The chosen chart of a state, with its numbers also as a table (a chart's accessible alternative). */
export function Results({ state, window, features }: { state: VisualizeState; window: Window; features: Features }) {
  if (state.chart === 'stacked' || state.chart === 'lines') return <TimeResults state={state} window={window} features={features} />;
  return <TopResults state={state} window={window} features={features} />;
}

function TimeResults({ state, window, features }: { state: VisualizeState; window: Window; features: Features }) {
  const series = useLoad(() => loadSeries(state, window, features), [state, window, features]);
  const title = `Traffic by ${state.by[0]} (${unitLabel[state.unit]})`;
  if (series.error) return <ErrorNote error={series.error} retry={series.reload} />;
  if (!series.data) return <p role="status">Loading…</p>;
  return (
    <>
      {state.by.length > 1 ? <p class="muted">Time charts split by the first dimension ({state.by[0]}); the table and sankey use all of them.</p> : null}
      <TimeSeriesChart title={title} data={series.data} unit={state.unit} stacked={state.chart === 'stacked'} />
      <SeriesTable data={series.data} unit={state.unit} />
    </>
  );
}

function SeriesTable({ data, unit }: { data: SeriesData; unit: Unit }) {
  const average = (values: number[]) => (values.length ? values.reduce((a, b) => a + b, 0) / values.length : 0);
  return (
    <details class="chart-data">
      <summary>The chart's numbers</summary>
      <table aria-label="Series averages">
        <thead><tr><th scope="col">Series</th><th scope="col">Average</th><th scope="col">Peak</th></tr></thead>
        <tbody>
          {data.lines.map((l) => (
            <tr key={l.label}><td>{l.label}</td><td>{rate(average(l.values), unit)}</td><td>{rate(l.values.reduce((m, v) => (Math.abs(v) > Math.abs(m) ? v : m), 0), unit)}</td></tr>
          ))}
        </tbody>
      </table>
    </details>
  );
}

function TopResults({ state, window, features }: { state: VisualizeState; window: Window; features: Features }) {
  const top = useLoad(() => loadTop(state, window, features), [state, window, features]);
  const seconds = (window.to - window.from) / 1000;
  if (top.error) return <ErrorNote error={top.error} retry={top.reload} />;
  if (!top.data) return <p role="status">Loading…</p>;
  if (state.chart === 'sankey') {
    if (state.by.length < 2) return <p class="note">A sankey needs two or three dimensions: add one above.</p>;
    return (
      <>
        <FlowSankey title={`Sankey of ${state.by.join(', ')} (${unitLabel[state.unit]})`} rows={top.data.rows} by={state.by} unit={state.unit} seconds={seconds} />
        {top.data.reverse ? <FlowSankey title={`Reverse direction: sankey of ${state.by.join(', ')} (${unitLabel[state.unit]})`} rows={top.data.reverse} by={state.by.map(reverseName)} unit={state.unit} seconds={seconds} /> : null}
        <details class="chart-data"><summary>The chart's numbers</summary><TopTable label="Sankey rows" rows={top.data.rows} state={state} window={window} /></details>
      </>
    );
  }
  return (
    <>
      <TopTable label={`Top ${state.by.join(', ')}`} rows={top.data.rows} state={state} window={window} previous={top.data.previous} />
      {top.data.reverse ? <TopTable label={`Reverse direction: top ${state.by.map(reverseName).join(', ')}`} rows={top.data.reverse} state={{ ...state, by: state.by.map(reverseName) }} window={window} /> : null}
    </>
  );
}


function TopTable({ label, rows, state, window, previous }: { label: string; rows: Row[]; state: VisualizeState; window: Window; previous?: Map<string, number> }) {
  const total = useMemo(() => rows.reduce((sum, r) => sum + rowRate(r, state.unit, window), 0), [rows, state.unit, window]);
  return (
    <table aria-label={label} class="top-table">
      <caption>{label}</caption>
      <thead>
        <tr>
          {state.by.map((d) => <th scope="col" key={d}>{d}</th>)}
          <th scope="col">{unitLabel[state.unit]}</th>
          {previous ? <th scope="col">previous period</th> : null}
          <th scope="col">share</th><th scope="col">bytes</th><th scope="col">packets</th><th scope="col">flows</th>
        </tr>
      </thead>
      <tbody>
        {rows.map((r) => (
          <tr key={rowKey(r, state.by)}>
            {state.by.map((d) => <td key={d}>{valueText(r, d)}</td>)}
            <td>{rate(rowRate(r, state.unit, window), state.unit)}</td>
            {previous ? <td>{rate((previous.get(rowKey(r, state.by)) ?? 0) / ((window.to - window.from) / 1000), state.unit)}</td> : null}
            <td>{total ? `${((100 * rowRate(r, state.unit, window)) / total).toFixed(1)} %` : '—'}</td>
            <td>{Number(r.bytes ?? 0).toLocaleString('en-US')}</td><td>{Number(r.packets ?? 0).toLocaleString('en-US')}</td><td>{Number(r.flows ?? 0).toLocaleString('en-US')}</td>
          </tr>
        ))}
        {rows.length === 0 ? <tr><td colSpan={state.by.length + 5}>No flows in this range.</td></tr> : null}
      </tbody>
    </table>
  );
}
