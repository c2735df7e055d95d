import fs from 'node:fs';
import path from 'node:path';
import { gobgpdBuildName } from '../../engines/gobgp';
import { parseNeighbour } from '../../engines/gobgp.config';
import { loadConfig } from '../../service/config';

describe('BGP speaker settings', () => {
  test('the gobgpd the service looks for in the tools folder is the one the set-up builds', () => {
    // The set-up is plain ESM that jest does not load: its declaration is read as text.
    const setup = fs.readFileSync(path.resolve(__dirname, '../../scripts/setup.mjs'), 'utf8');
    expect(/gobgpModuleVersion = '([^']+)'/.exec(setup)?.[1]).toBe('v3.10.0');
    expect(setup).toContain('const gobgpdBuild = `gobgpd-${gobgpModuleVersion}`;');
    expect(gobgpdBuildName).toBe('gobgpd-v3.10.0');
  });

  test('unset, the speaker is the embedded gobgpd on its loopback ports', () => {
    const { bgp } = loadConfig({});
    expect(bgp).toMatchObject({ speaker: { kind: 'embedded' }, embeddedApiPort: 15_051, embeddedBgpPort: 11_179, asn: 65_010, neighbours: [] });
  });

  test('an address names the operator\'s speaker, and off names none', () => {
    expect(loadConfig({ BGP_SPEAKER_ADDRESS: 'bgp.internal:50051' }).bgp.speaker).toEqual({ kind: 'remote', address: 'bgp.internal:50051' });
    expect(loadConfig({ BGP_SPEAKER_ADDRESS: 'off' }).bgp.speaker).toEqual({ kind: 'off' });
  });

  test('a CA file gives TLS to the operator\'s speaker, and is refused without one', () => {
    expect(loadConfig({ BGP_SPEAKER_ADDRESS: 'bgp.internal:50051', BGP_SPEAKER_TLS_CA_FILE: '/etc/nettel/bgp-ca.pem' }).bgp.speaker).toEqual({
      kind: 'remote',
      address: 'bgp.internal:50051',
      tls: { caFile: '/etc/nettel/bgp-ca.pem' },
    });
    expect(() => loadConfig({ BGP_SPEAKER_TLS_CA_FILE: '/etc/nettel/bgp-ca.pem' })).toThrow(/BGP_SPEAKER_TLS_CA_FILE needs BGP_SPEAKER_ADDRESS/);
  });

  test('neighbours are read as address, optional port, and AS number', () => {
    expect(loadConfig({ BGP_NEIGHBORS: '192.0.2.1@65001, 198.51.100.7:1179@65002,[2001:db8::1]:179@4200000000,2001:db8::2@65003' }).bgp.neighbours).toEqual([
      { address: '192.0.2.1', asn: 65_001, port: 179, multihop: true },
      { address: '198.51.100.7', asn: 65_002, port: 1179, multihop: true },
      { address: '2001:db8::1', asn: 4_200_000_000, port: 179, multihop: true },
      { address: '2001:db8::2', asn: 65_003, port: 179, multihop: true },
    ]);
  });

  test('a neighbour is multihop unless /direct names a directly connected router; /multihop says the default', () => {
    expect(loadConfig({ BGP_NEIGHBORS: '192.0.2.1@65001/direct,[2001:db8::1]:1179@65002/direct,198.51.100.7@65003/multihop,2001:db8::2@65004' }).bgp.neighbours).toEqual([
      { address: '192.0.2.1', asn: 65_001, port: 179, multihop: false },
      { address: '2001:db8::1', asn: 65_002, port: 1179, multihop: false },
      { address: '198.51.100.7', asn: 65_003, port: 179, multihop: true },
      { address: '2001:db8::2', asn: 65_004, port: 179, multihop: true },
    ]);
  });

  test('an IPv6 neighbour is kept in the canonical form the speaker names it by', () => {
    expect(parseNeighbour('2001:DB8:0:0::1@65003')).toEqual({ address: '2001:db8::1', asn: 65_003, port: 179, multihop: true });
  });

  test.each(['192.0.2.1', 'router@65001', '192.0.2.1@0', '192.0.2.1:70000@65001', '2001:db8::1:179@65001x', '192.0.2.1@4294967295', '192.0.2.1@65001/', '192.0.2.1@65001/Direct', '192.0.2.1@65001/direct/multihop', '192.0.2.1@65001/toString', '192.0.2.1/direct@65001'])(
    'a neighbour written %p is refused, naming the setting',
    (text) => {
      expect(parseNeighbour(text)).toBeUndefined();
      expect(() => loadConfig({ BGP_NEIGHBORS: text })).toThrow(/BGP_NEIGHBORS/);
    },
  );
});
