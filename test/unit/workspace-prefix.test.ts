import { canonicalPrefix, prefixesOverlap, prefixRange, prefixStatusOf } from '../../core/workspace-prefix';

describe('canonicalPrefix', () => {
  test('keeps an IPv4 network as it is', () => {
    expect(canonicalPrefix('198.51.100.0/24')).toEqual({ prefix: '198.51.100.0/24' });
  });

  test('writes an IPv6 network compressed and lower-case', () => {
    expect(canonicalPrefix('2001:DB8:0:0:0:0:0:0/32')).toEqual({ prefix: '2001:db8::/32' });
  });

  test('refuses an IPv4 prefix with a host bit set, naming the network it meant', () => {
    expect(canonicalPrefix('10.1.2.3/23')).toEqual({ error: '10.1.2.3/23 is not a network address, did you mean 10.1.2.0/23?' });
  });

  test('refuses an IPv6 prefix with a host bit set, naming the network it meant', () => {
    expect(canonicalPrefix('2001:db8::1/64')).toEqual({ error: '2001:db8::1/64 is not a network address, did you mean 2001:db8::/64?' });
  });

  test('takes a host route of either family', () => {
    expect([canonicalPrefix('192.0.2.7/32'), canonicalPrefix('2001:db8::7/128')]).toEqual([{ prefix: '192.0.2.7/32' }, { prefix: '2001:db8::7/128' }]);
  });

  test('refuses an IPv4 prefix wider than a /8', () => {
    expect(canonicalPrefix('0.0.0.0/4')).toEqual({ error: 'a /4 is wider than a workspace may declare (IPv4 /8 to /32)' });
  });

  test('takes a /8 and an IPv6 /16, the widest allowed', () => {
    expect([canonicalPrefix('10.0.0.0/8'), canonicalPrefix('2001::/16')]).toEqual([{ prefix: '10.0.0.0/8' }, { prefix: '2001::/16' }]);
  });

  test('refuses an IPv6 prefix wider than a /16', () => {
    expect(canonicalPrefix('2000::/12')).toEqual({ error: 'a /12 is wider than a workspace may declare (IPv6 /16 to /128)' });
  });

  test('refuses text that is not a prefix: a bare address, a length past the family, a zone, a name', () => {
    for (const text of ['10.0.0.0', '10.0.0.0/33', '2001:db8::/129', 'fe80::%eth0/64', 'example.com/24', '10.0.0.0/8/8', '10.0.0.0/-1']) {
      expect(canonicalPrefix(text)).toEqual({ error: expect.stringContaining('is not an IPv4 or IPv6 prefix') as unknown });
    }
  });
});

describe('prefixesOverlap', () => {
  test('a prefix overlaps one it lies within, and one within it', () => {
    expect([prefixesOverlap('10.1.0.0/16', '10.0.0.0/8'), prefixesOverlap('10.0.0.0/8', '10.1.0.0/16')]).toEqual([true, true]);
  });

  test('neighbouring prefixes and prefixes of two families do not overlap', () => {
    expect([prefixesOverlap('10.0.0.0/16', '10.1.0.0/16'), prefixesOverlap('10.0.0.0/8', '::ffff:a00:0/104')]).toEqual([false, false]);
  });
});

describe('prefixRange', () => {
  test('an IPv4 prefix spans its first to its last address, tagged 4', () => {
    expect(prefixRange('10.1.2.0/23')).toEqual({ first: '40a010200', last: '40a0103ff' });
  });

  test('an IPv6 prefix spans its first to its last address, tagged 6', () => {
    expect(prefixRange('2001:db8::/32')).toEqual({ first: '620010db8000000000000000000000000', last: '620010db8ffffffffffffffffffffffff' });
  });

  test('the ranges of two prefixes interleave as strings exactly when the prefixes overlap', () => {
    const pairs: Array<[string, string]> = [['10.0.0.0/8', '10.1.0.0/16'], ['10.0.0.0/16', '10.1.0.0/16'], ['192.0.2.0/24', '2001:db8::/32'], ['2001:db8::/48', '2001:db8::/32']];
    for (const [a, b] of pairs) {
      const [ra, rb] = [prefixRange(a), prefixRange(b)];
      expect(ra.first <= rb.last && rb.first <= ra.last).toBe(prefixesOverlap(a, b));
    }
  });
});

test('a status storage does not know is read as removed, which allows nothing', () => {
  expect([prefixStatusOf('approved'), prefixStatusOf('active')]).toEqual(['approved', 'removed']);
});
