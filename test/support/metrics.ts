import type { Registry } from '../../observability/metrics';

/** The sum of a metric's values over every label set: what a test reads of a counter, whatever its labels. */
export async function metricTotal(registry: Registry, name: string): Promise<number> {
  const metric = registry.getSingleMetric(name);
  if (!metric) return 0;
  return (await metric.get()).values.reduce((sum, v) => sum + v.value, 0);
}
