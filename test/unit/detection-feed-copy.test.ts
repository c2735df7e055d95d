import { flowDigestLine } from '../../core/flow';
import type { MsgHdrs } from 'nats';
import { Registry } from 'prom-client';
import { telemetryHeaderNames } from '../../core/telemetry-headers';
import { DetectionFeed } from '../../streams/detection-feed';
import { flow } from '../support/detection-flows';
import { message } from '../support/work-messages';

/** The copies the stream workers publish, against a plain object standing for the NATS client. */
function feedOver() {
  const published: Array<{ subject: string; data: string; headers: MsgHdrs; msgID: string }> = [];
  const nats = {
    isConnected: true,
    js: () => ({
      publish: (subject: string, data: Uint8Array, opts: { msgID: string; headers: MsgHdrs }) => {
        published.push({ subject, data: Buffer.from(data).toString(), headers: opts.headers, msgID: opts.msgID });
        return Promise.resolve({ duplicate: false });
      },
    }),
  };
  return { feed: new DetectionFeed({ nats: nats as never, prefix: 'tu', registry: new Registry() }), published };
}

describe('the copy a written flow message gives the rate detectors', () => {
  const digest = `${flowDigestLine(flow())}\n`;

  test('is its digest alone, marked as one, without the rows or their length', async () => {
    const { feed, published } = feedOver();
    const written = message({ seq: 41, digest });
    await feed.copy([{ orgId: 'org_a', message: written }]);
    expect(published).toHaveLength(1);
    expect(published[0]!.data).toBe(digest);
    expect(published[0]!.headers.get(telemetryHeaderNames.digest)).toBe('1');
    expect(published[0]!.headers.has(telemetryHeaderNames.rowsBytes)).toBe(false);
    expect(published[0]!.headers.get(telemetryHeaderNames.org)).toBe('org_a');
    expect(published[0]!.subject).toBe('tu.detect.flow.org_a');
    expect(published[0]!.msgID).toBe('tel-41');
  });

  test('of a message from a release before the digest is its rows, unmarked', async () => {
    const { feed, published } = feedOver();
    const written = message({ rows: [{ org_id: 'org_a', event_id: 'evt_1', ts: 1 }] });
    await feed.copy([{ orgId: 'org_a', message: written }]);
    expect(published[0]!.data).toBe(`${JSON.stringify({ org_id: 'org_a', event_id: 'evt_1', ts: 1 })}\n`);
    expect(published[0]!.headers.has(telemetryHeaderNames.digest)).toBe(false);
  });
});
