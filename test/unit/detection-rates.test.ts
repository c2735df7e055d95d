import { RateDetector } from '../../core/detection/detect';
import { RateWindows, defaultWindowSettings, type ClosedWindow } from '../../core/detection/rate-window';
import { defaultRateRules, type RateRules } from '../../core/detection/rules';
import { rateSignal } from '../../core/detection/signals';
import { classesOf, ratesOf, type RateFlow } from '../../core/detection/traffic-class';
import { toFlowRow } from '../../core/flow';
import { batched, flow, seeded, shuffled, syn, synAck, t0 } from '../support/detection-flows';

const rates = (w: ClosedWindow, dst = '203.0.113.9') => ratesOf(w.byDestination.get(dst)!, w.seconds);

describe('traffic classes of a flow', () => {
  test('a TCP flow with SYN and no ACK counts as tcp and tcp_syn', () => {
    expect(classesOf(flow({ tcp_flags: syn }))).toEqual(['total', 'tcp', 'tcp_syn']);
  });

  test('a TCP flow with SYN and ACK counts as tcp only', () => {
    expect(classesOf(flow({ tcp_flags: synAck }))).toEqual(['total', 'tcp']);
  });

  test('a UDP flow from source port 123 counts as udp and ntp', () => {
    expect(classesOf(flow({ protocol: 'udp', src_port: 123 }))).toEqual(['total', 'udp', 'ntp']);
  });

  test.each([
    [53, 'dns'], [1900, 'ssdp'], [11211, 'memcached'], [389, 'cldap'], [19, 'chargen'],
  ])('a UDP flow from source port %i counts as %s', (port, vector) => {
    expect(classesOf(flow({ protocol: '17', src_port: port }))).toContain(vector);
  });

  test('a TCP flow from source port 53 is not amplification', () => {
    expect(classesOf(flow({ src_port: 53 }))).toEqual(['total', 'tcp']);
  });

  test('a UDP flow with both ports 0 counts as fragments', () => {
    expect(classesOf(flow({ protocol: 'udp', src_port: 0, dst_port: 0 }))).toEqual(['total', 'udp', 'fragments']);
  });

  test('an ICMPv6 flow counts as icmp as an ICMP one does', () => {
    expect(classesOf(flow({ protocol: 'ipv6-icmp', src_port: 0, dst_port: 0 }))).toEqual(['total', 'icmp']);
    expect(classesOf(flow({ protocol: 'icmp', src_port: 0, dst_port: 0 }))).toEqual(['total', 'icmp']);
  });
});

describe('rate windows by event time', () => {
  test('a window averages its destination over five one-second buckets', () => {
    const windows = new RateWindows();
    windows.add([flow({ packets: 1000, bytes: 1_000_000 }), flow({ ts: t0 + 1500, packets: 4000, bytes: 4_000_000 })]);
    const [first] = windows.flush();
    expect(first!.end).toBe(t0 + 1000);
    expect(rates(first!).total).toEqual({ pps: 200, bps: 1_600_000, fps: 0.2 });
  });

  test('a flow sampled 1 in 100 counts 100 times its packets and bytes, and once as a flow', () => {
    const row = toFlowRow({ src_ip: '198.51.100.1', dst_ip: '203.0.113.9', protocol: 'udp', bytes: 500, packets: 5, sampling_rate: 100, timestamp: t0 }, { org_id: 'o', event_id: 'e', ts: t0, received_at: t0 });
    const windows = new RateWindows();
    windows.add([row]);
    expect(rates(windows.flush()[0]!).udp).toEqual({ pps: 100, bps: 80_000, fps: 0.2 });
  });

  test('IPv6 destinations are counted as IPv4 ones are', () => {
    const windows = new RateWindows();
    windows.add([flow({ dst_ip: '2001:db8::9', packets: 500 })]);
    expect(rates(windows.flush()[0]!, '2001:db8::9').total.pps).toBe(100);
  });

  test('a bucket closes only once the newest event time is past its end by the lateness bound', () => {
    const windows = new RateWindows();
    windows.add([flow(), flow({ ts: t0 + 5999 })]);
    expect(windows.advance()).toEqual([]);
    windows.add([flow({ ts: t0 + 6000 })]);
    expect(windows.advance().map((w) => w.end)).toEqual([t0 + 1000]);
  });

  test('a flow whose bucket has closed is counted late and left out', () => {
    const windows = new RateWindows();
    windows.add([flow(), flow({ ts: t0 + 7000 })]);
    const closed = windows.advance();
    windows.add([flow({ ts: t0 + 500, packets: 99 })]);
    const all = [...closed, ...windows.flush()];
    expect(windows.late).toBe(1);
    expect(all.filter((w) => w.byDestination.has('203.0.113.9') && w.end <= t0 + 5000).map((w) => rates(w).total.pps)).toEqual([0.2, 0.2, 0.2, 0.2, 0.2]);
  });

  test('a bucket tracks at most maxDestinations and marks the windows over it saturated', () => {
    const windows = new RateWindows({ ...defaultWindowSettings, maxDestinations: 2 });
    windows.add(['203.0.113.1', '203.0.113.2', '203.0.113.3'].map((dst_ip) => flow({ dst_ip })));
    const [w] = windows.flush();
    expect(w!.byDestination.size).toBe(2);
    expect(w!.saturated).toBe(true);
    expect(windows.untracked).toBe(1);
  });

  test('buckets no window can read any more are let go', () => {
    const windows = new RateWindows();
    windows.add([flow(), flow({ ts: t0 + 60_000 })]);
    windows.advance();
    windows.add([flow({ ts: t0 + 120_000 })]);
    const ends = windows.flush().map((w) => w.end);
    expect(Math.min(...ends)).toBeGreaterThan(t0 + 60_000);
  });
});

describe('the rate detector is deterministic', () => {
  const rules: RateRules = { ...defaultRateRules, thresholds: { total: { pps: 2_000 }, tcp_syn: { pps: 1_000 } } };

  /** A minute of background to three addresses and a ten-second SYN flood to one, flows within two seconds of event-time order. */
  function traffic(random: () => number): RateFlow[] {
    const out: RateFlow[] = [];
    for (let s = 0; s < 60; s++) {
      for (const dst of ['203.0.113.1', '203.0.113.2', '2001:db8::3']) out.push(flow({ ts: t0 + s * 1000 + Math.floor(random() * 1000), dst_ip: dst, packets: 100 + Math.floor(random() * 100), tcp_flags: synAck }));
      if (s >= 20 && s < 30) for (let k = 0; k < 20; k++) out.push(flow({ ts: t0 + s * 1000 + k * 50, dst_ip: '203.0.113.1', src_ip: `198.51.100.${k}`, packets: 600, bytes: 36_000, tcp_flags: syn }));
    }
    return out.sort((a, b) => a.ts - b.ts);
  }

  /** Each flow moved at most `spreadMs` away from its place in event-time order: late arrivals within the lateness bound. */
  function jittered(flows: RateFlow[], random: () => number, spreadMs: number): RateFlow[] {
    return flows.map((f) => ({ f, at: f.ts + random() * spreadMs })).sort((a, b) => a.at - b.at).map((x) => x.f);
  }

  function decide(batches: RateFlow[][]): string[] {
    const detector = new RateDetector(rules);
    const out = batches.flatMap((b) => detector.add(b));
    return [...out, ...detector.flush()].map((d) => `${d.window_end} ${d.target} ${d.rule} ${d.rates.total.pps}`);
  }

  test('the same flows in any order within the lateness bound and any batching give the same decisions', () => {
    const flows = traffic(seeded(1));
    const expected = decide([flows]);
    expect(expected.length).toBeGreaterThan(0);
    for (let seed = 2; seed < 22; seed++) {
      const random = seeded(seed);
      expect(decide(batched(jittered(flows, random, 4000), random))).toEqual(expected);
    }
  });

  test('all the flows shuffled in one batch give the same decisions as in event-time order', () => {
    const flows = traffic(seeded(1));
    expect(decide([shuffled(flows, seeded(7))])).toEqual(decide([flows]));
  });

  /** Version 2 fed the batches: the signal ids it reported early, of the windows closed as flows came, and of those the final flush closed. */
  function signals(batches: RateFlow[][]) {
    const detector = new RateDetector(rules, undefined, { version: 2 });
    const id = (d: Parameters<typeof rateSignal>[1]) => rateSignal('org1', d, 0).event_id;
    const early: string[] = [];
    const closed: string[] = [];
    for (const b of batches) {
      closed.push(...detector.add(b).map(id));
      early.push(...detector.takeEarly().map(id));
    }
    const flushed = detector.flush();
    return { early, closed: [...closed, ...flushed.map(id)], flushedHosts: flushed.filter((d) => d.scope === 'host').map(id) };
  }

  test.each([
    ['a flood that ends before the flows do', Infinity],
    ['a flood still on when the flows end', t0 + 27_000],
  ])('version 2, %s: the windows reported early cross once closed, each reported once, and the same flows give the same signals in any order and batching', (_, cut) => {
    const flows = traffic(seeded(1)).filter((f) => f.ts < cut);
    const expected = [...new Set(signals([flows]).closed)].sort();
    for (let seed = 2; seed < 22; seed++) {
      const random = seeded(seed);
      const { early, closed, flushedHosts } = signals(batched(jittered(flows, random, 4000), random));
      expect(early.length).toBeGreaterThan(0);
      expect(new Set(early).size).toBe(early.length);
      expect(early.filter((e) => !closed.includes(e))).toEqual([]);
      // A host window still open after the last flows was reported early: its sums were final while it was open.
      if (cut !== Infinity) expect(flushedHosts.length).toBeGreaterThan(0);
      expect(flushedHosts.filter((e) => !early.includes(e))).toEqual([]);
      expect([...new Set(closed)].sort()).toEqual(expected);
    }
  });
});
