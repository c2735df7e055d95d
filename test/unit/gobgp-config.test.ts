import fs from 'node:fs';
import path from 'node:path';
import { gobgpConfigText, gobgpModuleVersion, gobgpProtoDirName } from '../../engines/gobgp';

describe('the local gobgpd', () => {
  test('the .proto files the adapter loads are where the set-up puts them, from the release Debian ships (3.10.0)', () => {
    // The set-up is plain ESM that jest does not load: its declaration is read as text.
    const setup = fs.readFileSync(path.resolve(__dirname, '../../scripts/setup.mjs'), 'utf8');
    const version = /gobgpModuleVersion = '([^']+)'/.exec(setup)?.[1];
    expect(version).toBe('v3.10.0');
    expect(gobgpModuleVersion).toBe(version);
    expect(gobgpProtoDirName).toBe(`gobgp-proto-${version}`);
    expect(setup).toContain('const gobgpProtoDir = `gobgp-proto-${gobgpModuleVersion}`;');
  });

  test('its BGP listener is on loopback and the port given, not every address on 179', () => {
    const text = gobgpConfigText({ asn: 65001, routerId: '127.0.0.1', bgpPort: 11179 });
    expect(text).toMatch(/^ {2}port = 11179$/m);
    expect(text).toMatch(/^ {2}local-address-list = \["127\.0\.0\.1"\]$/m);
    expect(text).toMatch(/^ {2}as = 65001$/m);
    expect(text).toMatch(/^ {2}router-id = "127\.0\.0\.1"$/m);
  });

  test('it starts with no neighbour: routers are added over the API', () => {
    expect(gobgpConfigText({ asn: 65001, routerId: '127.0.0.1', bgpPort: 11179 })).not.toContain('neighbors');
  });
});
