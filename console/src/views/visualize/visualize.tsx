import { useEffect, useMemo, useState } from 'preact/hooks';
import { request } from '../../api';
import { asApiError, ErrorNote, Section, useLoad } from '../../ui';
import type { ApiError } from '../../api';
import { apiFeatures, queryOf, windowOf, type Features } from './data';
import { unitLabel } from './echart';
import { FilterBox } from './filter-box';
import { dimensionNames, isDimension } from './filter-text';
import { Results } from './results';
import { SavedViews } from './saved-views';
import { charts, defaultState, hashState, ranges, stateHash, units, type Chart, type VisualizeState } from './state';

/**
 * The analyst's visualize page (issue 34): a filter in the filter language,
 * one to three dimensions, a time range, a chart (stacked areas, lines,
 * sankey, table), a unit, the previous period and the reverse direction.
 * The URL always names the view (state.ts); a CSV of what is shown is the
 * API's own `Accept: text/csv` answer to the same query.
 */
const chartLabels: Record<Chart, string> = { stacked: 'stacked area', lines: 'lines', sankey: 'sankey', table: 'table' };
const noFeatures: Features = { unit: false, previous: false, complete: false, views: false };

function initialState(): { state: VisualizeState; note?: string } {
  return hashState(location.hash, isDimension) ?? { state: defaultState };
}

export function VisualizeView() {
  const [{ state, note }, setView] = useState(initialState);
  const [tick, setTick] = useState(0);
  const features = useLoad(apiFeatures, []);
  const f = features.data ?? noFeatures;
  // The window is fixed when the state (or a refresh) asks: every chart of one state reads the same range.
  const window = useMemo(() => windowOf(state.range), [state, tick]);
  const set = (change: Partial<VisualizeState>) => setView({ state: { ...state, ...change } });
  useEffect(() => {
    const hash = stateHash(state);
    if (location.hash !== hash) history.replaceState(null, '', hash);
  }, [state]);
  useEffect(() => {
    const onHash = () => { const read = hashState(location.hash, isDimension); if (read) setView(read); };
    addEventListener('hashchange', onHash);
    return () => removeEventListener('hashchange', onHash);
  }, []);
  return (
    <>
      <Section title="Visualize" actions={<a href={stateHash(state)} class="muted">Link to this view</a>}>
        {note ? <p class="note" role="status">{note}</p> : null}
        <FilterBox value={state.filter} features={f} onApply={(filter) => set({ filter })} />
        <Controls state={state} set={set} onRefresh={() => setTick((t) => t + 1)} />
        {features.loading ? <p role="status">Loading…</p> : <Results state={state} window={window} features={f} />}
        <CsvDownload state={state} window={window} features={f} />
      </Section>
      {f.views ? <SavedViews state={state} onOpen={(s) => setView({ state: s })} /> : null}
    </>
  );
}

function DimensionPicker({ by, set }: { by: string[]; set: (by: string[]) => void }) {
  const choose = (i: number, value: string) => {
    const next = [...by];
    if (value) next[i] = value;
    else next.splice(i, 1);
    set([...new Set(next.filter(Boolean))]);
  };
  return (
    <fieldset class="dimensions">
      <legend>Dimensions</legend>
      {[0, 1, 2].filter((i) => i <= by.length && i < 3).map((i) => (
        <label key={i}>
          {`Dimension ${i + 1}`}
          <select value={by[i] ?? ''} onChange={(e) => choose(i, e.currentTarget.value)}>
            {i > 0 ? <option value="">(none)</option> : null}
            {dimensionNames.map((d) => <option value={d} key={d}>{d}</option>)}
          </select>
        </label>
      ))}
    </fieldset>
  );
}

function Controls({ state, set, onRefresh }: { state: VisualizeState; set: (c: Partial<VisualizeState>) => void; onRefresh: () => void }) {
  return (
    <form class="filters visualize-controls" onSubmit={(e) => e.preventDefault()}>
      <DimensionPicker by={state.by} set={(by) => set({ by })} />
      <label>
        Time range
        <select value={state.range} onChange={(e) => set({ range: e.currentTarget.value })}>
          {Object.entries(ranges).map(([name, r]) => <option value={name} key={name}>{r.label}</option>)}
        </select>
      </label>
      <label>
        Chart
        <select value={state.chart} onChange={(e) => set({ chart: e.currentTarget.value as Chart })}>
          {charts.map((c) => <option value={c} key={c}>{chartLabels[c]}</option>)}
        </select>
      </label>
      <label>
        Unit
        <select value={state.unit} onChange={(e) => set({ unit: e.currentTarget.value as VisualizeState['unit'] })}>
          {units.map((u) => <option value={u} key={u}>{unitLabel[u]}</option>)}
        </select>
      </label>
      <label class="check"><input type="checkbox" checked={state.previous} onChange={(e) => set({ previous: e.currentTarget.checked })} />Previous period</label>
      <label class="check"><input type="checkbox" checked={state.bidirectional} onChange={(e) => set({ bidirectional: e.currentTarget.checked })} />Both directions</label>
      <button type="button" class="secondary" onClick={onRefresh}>Refresh</button>
    </form>
  );
}

/** The API's CSV of the shown query (series for the time charts, top rows for the sankey and table), saved as a file. */
function CsvDownload({ state, window, features }: { state: VisualizeState; window: ReturnType<typeof windowOf>; features: Features }) {
  const [error, setError] = useState<ApiError>();
  const kind = state.chart === 'stacked' || state.chart === 'lines' ? 'series' : 'top';
  const download = () => {
    setError(undefined);
    request<string>('GET', queryOf(kind, state, window, features), undefined, 'text/csv').then((csv) => {
      const url = URL.createObjectURL(new Blob([csv], { type: 'text/csv' }));
      const a = document.createElement('a');
      a.href = url;
      a.download = `flows-${kind}.csv`;
      a.click();
      setTimeout(() => URL.revokeObjectURL(url), 10_000);
    }, (err: unknown) => setError(asApiError(err)));
  };
  return (
    <div class="actions">
      <button type="button" class="secondary" onClick={download}>Download CSV</button>
      {error ? <ErrorNote error={error} /> : null}
    </div>
  );
}
