import { isIPv4 } from 'node:net';
import { ipv4Number, isIPv4Text } from '../../core/ipv4-text';

describe('IPv4 text', () => {
  it.each(['0.0.0.0', '255.255.255.255', '192.0.2.17', '10.0.0.1', '1.2.3.4'])('takes %s', (s) => {
    expect(isIPv4Text(s)).toBe(true);
  });

  it.each(['', '1.2.3', '1.2.3.4.5', '256.0.0.1', '01.2.3.4', '1.2.3.04', '1..2.3', '.1.2.3', '1.2.3.', '1.2.3.4 ', ' 1.2.3.4', '1.2.3.-4', '1.2.3.a', '1000.2.3.4', '::1', '1.2.3.4/32', '١.2.3.4'])(
    'refuses %j',
    (s) => {
      expect(isIPv4Text(s)).toBe(false);
    },
  );

  it('agrees with node:net isIPv4 on a hundred thousand strings of digits and dots', () => {
    let seed = 7;
    const next = () => (seed = (seed * 1_103_515_245 + 12_345) % 2_147_483_648);
    const alphabet = '0123456789.....2519x';
    for (let n = 0; n < 100_000; n += 1) {
      let s = '';
      const length = 1 + (next() % 17);
      for (let i = 0; i < length; i += 1) s += alphabet[next() % alphabet.length];
      if (isIPv4Text(s) !== isIPv4(s)) throw new Error(`disagrees on ${JSON.stringify(s)}`);
    }
  });

  it('agrees with node:net isIPv4 on every octet value and its zero-padded forms', () => {
    for (let v = 0; v < 1000; v += 1) {
      for (const text of [String(v), String(v).padStart(2, '0'), String(v).padStart(3, '0')]) {
        const s = `10.${text}.0.1`;
        expect(isIPv4Text(s)).toBe(isIPv4(s));
      }
    }
  });

  it('reads valid text as its four octets in network order, and anything refused as -1', () => {
    expect(ipv4Number('1.2.3.4')).toBe(0x01020304);
    expect(ipv4Number('255.255.255.255')).toBe(0xffffffff);
    expect(ipv4Number('0.0.0.0')).toBe(0);
    let seed = 11;
    const next = () => (seed = (seed * 1_103_515_245 + 12_345) % 2_147_483_648);
    for (let n = 0; n < 10_000; n += 1) {
      const octets = [next() % 256, next() % 256, next() % 256, next() % 256];
      expect(ipv4Number(octets.join('.'))).toBe(((octets[0]! << 24) | (octets[1]! << 16) | (octets[2]! << 8) | octets[3]!) >>> 0);
    }
    for (const bad of ['1.2.3', '1.2.3.4.5', '256.0.0.1', '1..2.3', 'a.b.c.d', '', '1.2.3.4 ', '01.2.3.4', '1.2.3.00']) expect(ipv4Number(bad)).toBe(-1);
  });
});
