import { Counter, Gauge, Histogram, Registry, collectDefaultMetrics } from 'prom-client';

/**
 * Everything that moves gets a counter. One registry per process, created at
 * wiring time; each component declares its own metrics beside its code with
 * the helpers below, which return the registered metric when another
 * component (or a second instance) declared it already.
 */
export type { Registry } from 'prom-client';

export function createRegistry(): Registry {
  const registry = new Registry();
  collectDefaultMetrics({ register: registry });
  return registry;
}

interface Declaration<L extends string> {
  name: string;
  help: string;
  labelNames?: readonly L[];
}

function declared<M>(registry: Registry, name: string, create: () => M): M {
  return (registry.getSingleMetric(name) as M | undefined) ?? create();
}

export function counter<L extends string = never>(registry: Registry, d: Declaration<L>): Counter<L> {
  return declared(registry, d.name, () => new Counter<L>({ ...d, labelNames: d.labelNames ?? [], registers: [registry] }));
}

export function gauge<L extends string = never>(registry: Registry, d: Declaration<L> & { collect?: (this: Gauge<L>) => Promise<void> | void }): Gauge<L> {
  return declared(registry, d.name, () => new Gauge<L>({ ...d, labelNames: d.labelNames ?? [], registers: [registry] }));
}

export function histogram<L extends string = never>(registry: Registry, d: Declaration<L> & { buckets: number[] }): Histogram<L> {
  return declared(registry, d.name, () => new Histogram<L>({ ...d, labelNames: d.labelNames ?? [], registers: [registry] }));
}

/** Failed calls to an engine, counted by every adapter and component that calls one. */
export const engineErrorsCounter = (registry: Registry) =>
  counter(registry, {
    name: 'nettel_engine_errors_total',
    help: 'Failed calls to an engine (nats, clickhouse, temporal) by operation',
    labelNames: ['engine', 'operation'] as const,
  });

