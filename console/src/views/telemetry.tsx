import { useMemo, useState } from 'preact/hooks';
import { get } from '../api';
import { Bars, TimeChart } from '../chart';
import { ErrorNote, number, Section, useLoad } from '../ui';
import { InterfaceTraffic, RecentFlows } from './flow-details';

const ranges: [string, number][] = [['last 15 minutes', 900_000], ['last hour', 3600_000], ['last 6 hours', 6 * 3600_000], ['last 24 hours', 86_400_000], ['last 7 days', 7 * 86_400_000]];
const dimensions: [string, string][] = [['src_ip', 'source'], ['dst_ip', 'destination'], ['protocol', 'protocol'], ['exporter', 'exporter'], ['in_if', 'input interface'], ['out_if', 'output interface'], ['src_as', 'source AS'], ['dst_as', 'destination AS'],
  ['src_country', 'source country'], ['dst_country', 'destination country'],
  // Interface names and classification, resolved when read (docs/enrichment.md).
  ['in_if_name', 'input interface name'], ['out_if_name', 'output interface name'], ['in_if_boundary', 'input boundary'],
  ['in_if_connectivity', 'input connectivity'], ['in_if_provider', 'input provider'], ['exporter_site', 'exporter site'], ['exporter_group', 'exporter group']];

export function TelemetryView() {
  const [range, setRange] = useState(3600_000);
  const [by, setBy] = useState('src_ip');
  const [metric, setMetric] = useState<Metric>('bytes');
  // The range is fixed when chosen, so refreshes of one choice ask for the same window.
  const window = useMemo(() => ({ from: new Date(Date.now() - range).toISOString(), to: new Date().toISOString() }), [range, by, metric]);
  return (
    <Section title="Telemetry">
      <form class="filters" onSubmit={(e) => e.preventDefault()}>
        <label>
          Time range
          <select value={String(range)} onChange={(e) => setRange(Number(e.currentTarget.value))}>
            {ranges.map(([label, ms]) => <option value={String(ms)}>{label}</option>)}
          </select>
        </label>
        <label>
          Top talkers by
          <select value={by} onChange={(e) => setBy(e.currentTarget.value)}>
            {dimensions.map(([value, label]) => <option value={value}>{label}</option>)}
          </select>
        </label>
        <label>
          Ranked by
          <select value={metric} onChange={(e) => setMetric(e.currentTarget.value as Metric)}>
            {['bytes', 'packets', 'flows'].map((m) => <option value={m}>{m}</option>)}
          </select>
        </label>
      </form>
      <TopTalkers by={by} metric={metric} window={window} />
      <RecentFlows window={window} />
      <InterfaceTraffic window={window} />
      <TrafficSeries window={window} />
      <MetricSeries window={window} />
    </Section>
  );
}

type Window = { from: string; to: string };
type Metric = 'bytes' | 'packets' | 'flows';

function TopTalkers({ by, metric, window }: { by: string; metric: Metric; window: Window }) {
  const top = useLoad(() => get('/v1/telemetry/flows/top', { query: { by, metric, limit: 10, ...window } }), [by, metric, window]);
  const label = dimensions.find(([d]) => d === by)?.[1] ?? by;
  const rows = (top.data?.data ?? []).map((r) => ({ label: typeof r[`${by}_name`] === 'string' ? `${String(r[by])} ${String(r[`${by}_name`])}` : String(r[by]), value: Number(r[metric]), text: `${number(Number(r[metric]))} ${metric === 'bytes' ? 'B' : metric}` }));
  return (
    <>
      <h3>Top talkers by {label}</h3>
      {top.error ? <ErrorNote error={top.error} retry={top.reload} /> : <Bars title={`Top ${label} by ${metric}`} rows={rows} />}
      {top.data ? <p class="muted">Read from the {top.data.resolution} resolution.</p> : null}
    </>
  );
}

function TrafficSeries({ window }: { window: Window }) {
  const series = useLoad(() => get('/v1/telemetry/flows/series', { query: { split_by: 'protocol', limit: 5, ...window } }), [window]);
  const chart = useMemo(() => {
    const all = series.data?.series ?? [];
    const times = (all[0]?.points ?? []).map((p) => Date.parse(p.t) / 1000);
    const lines = all.map((s) => ({ label: s.key ? Object.values(s.key).join(' ').replace('true', 'other') : 'all', values: s.points.map((p) => p.bps) }));
    return { times, lines };
  }, [series.data]);
  return (
    <>
      <h3>Traffic by protocol (bits per second)</h3>
      {series.error ? <ErrorNote error={series.error} retry={series.reload} /> : <TimeChart title="Traffic by protocol" times={chart.times} series={chart.lines} unit="bit/s" />}
    </>
  );
}

function MetricSeries({ window }: { window: Window }) {
  const [service, setService] = useState('');
  const [metric, setMetric] = useState('latency_ms');
  const asked = service.trim() !== '' && metric.trim() !== '';
  const series = useLoad(
    () => (asked ? get('/v1/telemetry/metrics/series', { query: { service, metric, ...window } }) : Promise.resolve(undefined)),
    [service, metric, window],
  );
  const chart = useMemo(() => {
    const points = series.data?.data ?? [];
    return { times: points.map((p) => Date.parse(p.t) / 1000), lines: [{ label: metric, values: points.map((p) => p.avg) }] };
  }, [series.data]);
  return (
    <>
      <h3>Metric series</h3>
      <form class="filters" onSubmit={(e) => e.preventDefault()}>
        <label>Service<input value={service} onChange={(e) => setService(e.currentTarget.value)} placeholder="e.g. edge" /></label>
        <label>Metric<input value={metric} onChange={(e) => setMetric(e.currentTarget.value)} /></label>
      </form>
      {series.error ? <ErrorNote error={series.error} retry={series.reload} /> : null}
      {asked && series.data ? <TimeChart title={`${metric} of ${service}`} times={chart.times} series={chart.lines} unit={metric} /> : <p class="muted">Name a service to chart its metric.</p>}
    </>
  );
}
