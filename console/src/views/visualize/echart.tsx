import { useEffect, useRef } from 'preact/hooks';
import { LineChart, SankeyChart } from 'echarts/charts';
import { AriaComponent, GridComponent, LegendComponent, TitleComponent, TooltipComponent } from 'echarts/components';
import * as echarts from 'echarts/core';
import { CanvasRenderer } from 'echarts/renderers';
import type { Unit } from './state';
import type { Row, SeriesData } from './data';

/**
 * The visualize page's charts, drawn by Apache ECharts (docs/console.md says
 * why): stacked areas or lines over time, and a sankey of two or three
 * dimensions. Only the parts used are registered, so the bundle carries no
 * other chart. ECharts' aria option writes a description of the chart (its
 * series and their values) as the container's aria-label; the page also
 * offers the numbers as a table.
 */
echarts.use([LineChart, SankeyChart, AriaComponent, GridComponent, LegendComponent, TitleComponent, TooltipComponent, CanvasRenderer]);

const colors = ['#1f5fa8', '#b4461f', '#2e7d32', '#6a3d9a', '#8c6d00', '#555555', '#00838f', '#ad1457', '#4e342e', '#283593', '#827717'];

export const unitLabel: Record<Unit, string> = { bytes: 'bytes/s', packets: 'packets/s', flows: 'flows/s' };

/** A rate as people read it: 1.2 M bytes/s. */
export function rate(value: number, unit: Unit): string {
  const abs = Math.abs(value);
  const [div, suffix] = abs >= 1e9 ? [1e9, ' G'] : abs >= 1e6 ? [1e6, ' M'] : abs >= 1e3 ? [1e3, ' k'] : [1, ' '];
  return `${(value / div).toLocaleString('en-US', { maximumFractionDigits: 2 })}${suffix}${unitLabel[unit]}`;
}

/**
 * A chart; `description` is what its aria-label says (ECharts' own lists
 * raw points, epoch times first): the series or links with their values.
 */
function EChart({ title, option, description, height = 360 }: { title: string; option: echarts.EChartsCoreOption; description: string; height?: number }) {
  const box = useRef<HTMLDivElement>(null);
  const chart = useRef<echarts.ECharts | undefined>(undefined);
  useEffect(() => {
    const el = box.current!;
    chart.current = echarts.init(el, undefined, { renderer: 'canvas', height });
    const onResize = () => chart.current?.resize();
    addEventListener('resize', onResize);
    return () => {
      removeEventListener('resize', onResize);
      chart.current?.dispose();
    };
  }, [height]);
  useEffect(() => {
    // No animation: a chart is read as soon as it is drawn (by people who prefer reduced motion, and by screenshots).
    chart.current?.setOption({ ...option, animation: false, title: { text: title, show: false }, aria: { enabled: true, label: { enabled: true, description }, decal: { show: false } } }, true);
  }, [option, title, description]);
  return <div class="echart" role="img" aria-label={title} data-chart={title} ref={box} />;
}

/** Stacked areas or lines over time; the reverse direction below the axis, the previous period dashed. */
export function TimeSeriesChart({ title, data, unit, stacked }: { title: string; data: SeriesData; unit: Unit; stacked: boolean }) {
  const series = data.lines.map((line, i) => ({
    type: 'line',
    name: line.label,
    data: data.times.map((t, j) => [t, line.values[j] ?? 0]),
    showSymbol: false,
    color: line.previous ? '#6b6b6b' : colors[i % colors.length],
    lineStyle: line.previous ? { type: 'dashed', width: 2 } : { width: stacked ? 1 : 2 },
    ...(stacked && !line.previous ? { stack: line.reverse ? 'reverse' : 'current', areaStyle: { opacity: 0.75 } } : {}),
  }));
  const option = {
    grid: { left: 90, right: 20, top: 40, bottom: 40 },
    legend: { type: 'scroll', top: 0 },
    tooltip: { trigger: 'axis', valueFormatter: (v: number) => rate(v, unit) },
    xAxis: { type: 'time' },
    yAxis: { type: 'value', name: unitLabel[unit], axisLabel: { formatter: (v: number) => rate(v, unit).replace(unitLabel[unit], '').trim() } },
    series,
  };
  const peak = (values: number[]) => values.reduce((m, v) => (Math.abs(v) > Math.abs(m) ? v : m), 0);
  const description = `${title}, ${data.times.length} steps of ${data.step} s. ${data.lines.map((l) => `${l.label}: peak ${rate(peak(l.values), unit)}`).join('; ')}.`;
  return <EChart title={title} option={option} description={description} />;
}

export const valueText = (row: Row, dimension: string) => {
  const value = row[dimension];
  const name = row[`${dimension}_name`];
  const text = value === null || value === '' ? '(none)' : String(value);
  return typeof name === 'string' && name ? `${text} ${name}` : text;
};

/** A sankey of the rows' dimensions, left to right: a node per dimension and value (named `dimension: value`, so levels never loop). */
export function FlowSankey({ title, rows, by, unit, seconds }: { title: string; rows: Row[]; by: string[]; unit: Unit; seconds: number }) {
  const nodes = new Set<string>();
  const links = new Map<string, { source: string; target: string; value: number }>();
  for (const row of rows) {
    const names = by.map((d) => `${d}: ${valueText(row, d)}`);
    names.forEach((n) => nodes.add(n));
    for (let i = 0; i + 1 < names.length; i += 1) {
      const key = `${names[i]}→${names[i + 1]}`;
      const link = links.get(key) ?? { source: names[i]!, target: names[i + 1]!, value: 0 };
      link.value += Number(row[unit] ?? 0) / seconds;
      links.set(key, link);
    }
  }
  const option = {
    tooltip: { trigger: 'item', valueFormatter: (v: number) => rate(v, unit) },
    series: [{ type: 'sankey', name: title, data: [...nodes].map((name) => ({ name })), links: [...links.values()], emphasis: { focus: 'adjacency' }, nodeGap: 12, label: { color: '#1b1b1b' }, lineStyle: { color: 'source', opacity: 0.4 } }],
  };
  const description = `${title}: ${[...links.values()].map((l) => `${l.source} to ${l.target}, ${rate(l.value, unit)}`).join('; ') || 'no flows in this range'}.`;
  return <EChart title={title} option={option} description={description} height={Math.max(320, Math.min(700, nodes.size * 28))} />;
}
