import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { call } from './client';
import { percentile } from './data';

/**
 * Webhook delivery latency, measured on the incident-latency scenario's own
 * incidents (so under its half-peak flow load, and adding no signal of its
 * own): its workspace subscribes a real receiver on loopback to
 * `incident.opened` before the first signal, and each signal is timed from
 * its POST to the receiver getting the signed event (ingest, correlation,
 * outbox, fan-out, delivery). The service must allow loopback receivers:
 * `allowLoopbackWebhooks()` before the stack starts.
 */
export function allowLoopbackWebhooks(): void {
  process.env.WEBHOOK_ALLOWED_HOSTS ??= '127.0.0.1';
}

/** What the receiver reads of an `incident.*` event: its time (the correlator's, as it wrote the change) and the incident. */
interface IncidentEvent {
  type: string;
  time: string;
  data?: { id?: string; service?: string };
}

async function receiver(onEvent: (event: IncidentEvent) => void) {
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      onEvent(JSON.parse(Buffer.concat(chunks).toString('utf8')) as IncidentEvent);
      res.writeHead(204).end();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return { server, url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/bench` };
}

async function subscribe(stackUrl: string, key: string, url: string): Promise<void> {
  const sub = await call(stackUrl, 'POST', '/v1/webhooks', key, { url, events: ['incident.opened'] });
  if (sub.status !== 201) throw new Error(`POST /v1/webhooks answered ${sub.status}`);
}

export interface WebhookProbe {
  /** Subscribes the receiver in the workspace of this key. */
  subscribe(key: string): Promise<void>;
  /** Latencies from each signal's POST (`posted`: service → performance.now()) to its event, once all arrived or 30 s passed. */
  result(posted: ReadonlyMap<string, number>): Promise<{ p50_ms: number; p99_ms: number; events: number; missing: number }>;
}

export async function webhookProbe(stackUrl: string): Promise<WebhookProbe> {
  const arrived = new Map<string, number>();
  const sink = await receiver((event) => {
    const service = event.data?.service;
    if (service && !arrived.has(service)) arrived.set(service, performance.now());
  });
  return {
    subscribe: (key) => subscribe(stackUrl, key, sink.url),
    async result(posted) {
      const deadline = Date.now() + 30_000;
      while ([...posted.keys()].some((s) => !arrived.has(s)) && Date.now() < deadline) await new Promise((r) => setTimeout(r, 20));
      sink.server.closeAllConnections();
      await new Promise((r) => sink.server.close(r));
      const latencies = [...posted.entries()].map(([s, t]) => (arrived.get(s) ?? Infinity) - t);
      return { p50_ms: percentile(latencies, 50), p99_ms: percentile(latencies, 99), events: posted.size, missing: latencies.filter((l) => l === Infinity).length };
    },
  };
}

/** An incident as its `incident.opened` event named it, and the event's time: when the correlator opened it (ms since the epoch). */
export interface IncidentOpening {
  id: string;
  openedAt: number;
}

/**
 * The incidents a workspace opens, by service, each with its `incident.opened`
 * event's time: the correlator's clock as it wrote the incident's first
 * version (taken once, before it publishes the event and writes), exact
 * whatever the delivery's own delay, which is not measured here.
 */
export async function incidentOpenings(stackUrl: string, key: string) {
  const opened = new Map<string, IncidentOpening>();
  const sink = await receiver((event) => {
    const { id, service } = event.data ?? {};
    const openedAt = Date.parse(event.time);
    // Deliveries may come out of order: the earliest opening of a service is its first incident.
    if (event.type === 'incident.opened' && id && service && !(openedAt >= (opened.get(service)?.openedAt ?? Infinity))) opened.set(service, { id, openedAt });
  });
  await subscribe(stackUrl, key, sink.url);
  return {
    opened,
    async close(): Promise<void> {
      sink.server.closeAllConnections();
      await new Promise((r) => sink.server.close(r));
    },
  };
}
