import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { gobgpProtoDir, localGobgpServer } from '../../engines/gobgp';
import { freePort, type LocalProcess } from '../../engines/local-process';
import { createLogger } from '../../observability/logger';
import { loadConfig } from '../../service/config';
import { BgpSpeaker, SpeakerUnavailableError } from '../../workers/mitigation/bgp-speaker';

/**
 * gobgpd with TLS on its API (--tls), as an operator's speaker may run:
 * the adapter talks to it only with the CA it was given, and a speaker whose
 * certificate that CA did not sign, or a plain connection, gets nothing.
 */
const log = createLogger('silent');
const config = loadConfig(process.env);

/** A self-signed certificate for 127.0.0.1 (its own CA), and its key. */
function certificate(dir: string, name: string): { certFile: string; keyFile: string } {
  const certFile = path.join(dir, `${name}.pem`);
  const keyFile = path.join(dir, `${name}.key`);
  execFileSync('openssl', ['req', '-x509', '-newkey', 'rsa:2048', '-nodes', '-days', '1', '-subj', '/CN=127.0.0.1', '-addext', 'subjectAltName=IP:127.0.0.1', '-keyout', keyFile, '-out', certFile], { stdio: 'ignore' });
  return { certFile, keyFile };
}

describe('the BGP speaker over TLS', () => {
  let dir: string;
  let gobgpd: LocalProcess;
  let address: string;
  let served: { certFile: string; keyFile: string };
  let other: { certFile: string; keyFile: string };
  const speakers: BgpSpeaker[] = [];
  const speaker = (tls?: { caFile: string }) => {
    const s = new BgpSpeaker({ address, tls, protoDir: gobgpProtoDir(config.toolsDir), callTimeoutMs: 2_000 });
    speakers.push(s);
    return s;
  };

  beforeAll(async () => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'bgp-tls-'));
    served = certificate(dir, 'speaker');
    other = certificate(dir, 'other');
    const [bgpPort, apiPort] = await Promise.all([freePort(), freePort()]);
    address = `127.0.0.1:${apiPort}`;
    gobgpd = localGobgpServer({ dir: path.join(dir, 'gobgpd'), bgpPort, apiPort, asn: 65010, routerId: '127.0.0.1', binPath: config.binPath, toolsDir: config.toolsDir, tls: served }, log);
    await gobgpd.start();
  }, 60_000);

  afterAll(async () => {
    for (const s of speakers) await s.stop();
    await gobgpd?.stop();
    fs.rmSync(dir, { recursive: true, force: true });
  });

  test('with the CA that signed the speaker\'s certificate, the adapter works', async () => {
    const s = speaker({ caFile: served.certFile });
    await s.start();
    await expect(s.neighbours()).resolves.toEqual([]);
  });

  test('with another CA, the speaker is refused as unreachable', async () => {
    await expect(speaker({ caFile: other.certFile }).start()).rejects.toBeInstanceOf(SpeakerUnavailableError);
  });

  test('without TLS, the speaker is refused as unreachable', async () => {
    await expect(speaker().start()).rejects.toBeInstanceOf(SpeakerUnavailableError);
  });
});
