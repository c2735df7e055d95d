import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { call, mintKey } from './client';
import { percentile } from './data';
import type { BenchStack } from './stack';

/**
 * Webhook delivery latency, run beside the incident-latency scenario (so
 * under its half-peak flow load): a workspace subscribes a real receiver on
 * loopback to `incident.opened`, posts one signal of a new service every
 * 100 ms, and times each from its POST to the receiver getting the signed
 * event (ingest, correlation, outbox, fan-out, delivery). The service must
 * allow loopback receivers: `allowLoopbackWebhooks()` before the stack starts.
 */
export function allowLoopbackWebhooks(): void {
  process.env.WEBHOOK_ALLOWED_HOSTS ??= '127.0.0.1';
}

async function receiver(onEvent: (service: string) => void) {
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const event = JSON.parse(Buffer.concat(chunks).toString('utf8')) as { data?: { service?: string } };
      if (event.data?.service) onEvent(event.data.service);
      res.writeHead(204).end();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return { server, url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/bench` };
}

export async function webhookDelivery(stack: BenchStack, adminKey: string, seconds: number) {
  const key = (await mintKey(stack.url, adminKey)).key;
  const posted = new Map<string, number>();
  const arrived = new Map<string, number>();
  const sink = await receiver((service) => {
    if (!arrived.has(service)) arrived.set(service, performance.now());
  });
  try {
    const sub = await call(stack.url, 'POST', '/v1/webhooks', key, { url: sink.url, events: ['incident.opened'] });
    if (sub.status !== 201) throw new Error(`POST /v1/webhooks answered ${sub.status}`);
    const stopAt = Date.now() + seconds * 1000;
    for (let n = 0; Date.now() < stopAt; n += 1) {
      const service = `wh-${n}`;
      posted.set(service, performance.now());
      await call(stack.url, 'POST', '/ingest', key, { telemetry: 'dns', service, environment: 'prod', region: 'eu', latency_ms: 5 });
      await new Promise((r) => setTimeout(r, 100));
    }
    const deadline = Date.now() + 30_000;
    while (arrived.size < posted.size && Date.now() < deadline) await new Promise((r) => setTimeout(r, 20));
  } finally {
    sink.server.closeAllConnections();
    await new Promise((r) => sink.server.close(r));
  }
  const latencies = [...posted.entries()].map(([s, t]) => (arrived.get(s) ?? Infinity) - t);
  return { p50_ms: percentile(latencies, 50), p99_ms: percentile(latencies, 99), events: posted.size, missing: latencies.filter((l) => l === Infinity).length };
}
