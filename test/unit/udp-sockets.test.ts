import { parseSocketLine, udpPortsBoundBy } from '../../workers/collector/udp-sockets';

describe('reading the kernel UDP socket table', () => {
  test('a row gives its local port (hex) and its inode', () => {
    const row = '  512: 0100007F:0807 00000000:0000 07 00000000:00000000 00:00000000 00000000     0        0 123456 2 0000000000000000 0';
    expect(parseSocketLine(row)).toEqual({ port: 2055, inode: '123456' });
  });

  test('an IPv6 row gives its port after the last colon', () => {
    const row = '  600: 00000000000000000000000000000000:18BB 00000000000000000000000000000000:0000 07 00000000:00000000 00:00000000 00000000     0        0 98765 2 0000000000000000 0';
    expect(parseSocketLine(row)).toEqual({ port: 6331, inode: '98765' });
  });

  test('a blank or cut row gives nothing', () => {
    expect(parseSocketLine('')).toBeUndefined();
    expect(parseSocketLine('  512: 0100007F:0807')).toBeUndefined();
  });
});

describe('the UDP ports a process holds', () => {
  test('a process that has exited holds none', async () => {
    const { spawnSync } = await import('node:child_process');
    const exited = spawnSync('true').pid;
    expect(await udpPortsBoundBy(exited)).toEqual(new Set());
  });
});
