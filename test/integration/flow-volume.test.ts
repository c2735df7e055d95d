import type { DataOf, TopTalkerRow } from '../support/api-types';
import { generateFlows, sortedEntries } from '../support/flows';
import { startTestStack, transports, type TestStack } from '../support/test-stack';
import { waitFor, waitForTelemetryDrained } from '../support/wait';

describe.each(transports)('100,000 flows on %s', (transport) => {
  let t: TestStack;
  beforeAll(async () => {
    t = await startTestStack(transport);
  });
  afterAll(async () => {
    await t.stop();
  });

  test('top-talker sums equal exactly what was sent: nothing lost, nothing counted twice', async () => {
    const { key } = await t.mintKey({ role: 'operator' });
    const now = Date.now();
    const flows = generateFlows(100_000, 5_000, 42, now);
    for (let i = 0; i < flows.batches.length; i += 4) {
      const answers = await Promise.all(
        flows.batches.slice(i, i + 4).map((body) => t.request('POST', '/flow', { key, raw: body, contentType: 'application/x-ndjson' })),
      );
      for (const a of answers) expect(a.status).toBe(201);
    }
    const range = `from=${now - 700_000}&to=${now + 60_000}`;
    // Every write done (the raw flows and every rollup the views feed), so each dimension reads the same rows.
    await waitForTelemetryDrained(t.stack.nats.jsm, t.stack.config.nats.prefix);
    const byDst = await waitFor(async () => {
      const r = await t.request<DataOf<TopTalkerRow<'dst_ip', 'bytes'>>>('GET', `/v1/telemetry/flows/top?by=dst_ip&metric=bytes&limit=1000&${range}`, { key });
      const flowsSeen = r.body.data.reduce((n: number, row: { flows: number }) => n + row.flows, 0);
      return flowsSeen >= flows.total ? r.body.data : undefined;
    }, 60_000, 'every flow in ClickHouse');
    expect(byDst.reduce((n: number, row: { flows: number }) => n + row.flows, 0)).toBe(flows.total);
    const dstSums = new Map<string, number>(byDst.map((row: { dst_ip: string; bytes: number }) => [row.dst_ip, row.bytes]));
    expect(sortedEntries(dstSums)).toEqual(sortedEntries(flows.bytesByDst));

    const bySrc = await t.request<DataOf<TopTalkerRow<'src_ip', 'packets'>>>('GET', `/v1/telemetry/flows/top?by=src_ip&metric=packets&limit=1000&${range}`, { key });
    const srcSums = new Map<string, number>(bySrc.body.data.map((row: { src_ip: string; packets: number }) => [row.src_ip, row.packets]));
    expect(sortedEntries(srcSums)).toEqual(sortedEntries(flows.packetsBySrc));
  });
});
