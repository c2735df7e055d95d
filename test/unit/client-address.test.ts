import { clientAddress, normalizeAddress, throttleKeyOf, TrustedProxies } from '../../core/client-address';

describe('the client address', () => {
  const none = new TrustedProxies([]);
  const proxies = new TrustedProxies(['10.0.0.0/8', '::1']);

  test('is the socket peer when no proxy is trusted, whatever X-Forwarded-For says', () => {
    expect(clientAddress('203.0.113.7', '198.51.100.1', none)).toBe('203.0.113.7');
  });

  test('is the socket peer when the peer is not a trusted proxy', () => {
    expect(clientAddress('203.0.113.7', '198.51.100.1', proxies)).toBe('203.0.113.7');
  });

  test('behind a trusted proxy is the address the proxy appended', () => {
    expect(clientAddress('10.1.2.3', '198.51.100.1', proxies)).toBe('198.51.100.1');
  });

  test('skips every trusted hop from the right and ignores what the client wrote left of them', () => {
    expect(clientAddress('10.1.2.3', '1.2.3.4, 198.51.100.1, 10.9.9.9', proxies)).toBe('198.51.100.1');
  });

  test('is the last trusted proxy when the hop it appended is no address', () => {
    expect(clientAddress('10.1.2.3', 'junk', proxies)).toBe('10.1.2.3');
  });

  test('reads an IPv4 peer of a dual-stack socket as IPv4', () => {
    expect(normalizeAddress('::FFFF:192.0.2.1')).toBe('192.0.2.1');
    expect(clientAddress('::ffff:10.0.0.1', '192.0.2.9', proxies)).toBe('192.0.2.9');
  });

  test('trusted proxies refuse an entry that is no address or range', () => {
    expect(() => new TrustedProxies(['proxy.local'])).toThrow('not an address or CIDR range');
  });
});

describe('the throttle key of an address', () => {
  test('is an IPv4 address itself', () => {
    expect(throttleKeyOf('192.0.2.1')).toBe('192.0.2.1');
  });

  test('is the /64 of an IPv6 address, written out or shortened', () => {
    expect(throttleKeyOf('2001:db8:0:1:aaaa:bbbb:cccc:dddd')).toBe('2001:db8:0:1::/64');
    expect(throttleKeyOf('2001:db8::1')).toBe('2001:db8:0:0::/64');
    expect(throttleKeyOf('2001:db8:0:0:ffff::1')).toBe('2001:db8:0:0::/64');
  });
});
