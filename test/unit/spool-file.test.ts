import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { writeSpoolFile } from '../../storage/spool';

describe('a spool file', () => {
  let dir: string;
  beforeEach(() => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'spool-file-'));
  });
  afterEach(() => fs.rmSync(dir, { recursive: true, force: true }));

  test('holds exactly the bytes of a batch of many megabytes', async () => {
    const data = Buffer.alloc(9 * 1024 * 1024 + 7);
    for (let i = 0; i < data.length; i += 1) data[i] = (i * 31) & 0xff;
    const file = path.join(dir, 'batch.jsonl');
    await writeSpoolFile(file, data);
    expect(fs.readFileSync(file).equals(data)).toBe(true);
  });

  test('is readable by its owner only', async () => {
    const file = path.join(dir, 'batch.jsonl');
    await writeSpoolFile(file, Buffer.from('{"a":1}\n'));
    expect(fs.statSync(file).mode & 0o777).toBe(0o600);
  });

  test('is never written through a file or link that is already there', async () => {
    const target = path.join(dir, 'elsewhere');
    fs.writeFileSync(target, 'kept');
    const file = path.join(dir, 'batch.jsonl');
    fs.symlinkSync(target, file);
    await expect(writeSpoolFile(file, Buffer.from('{"a":1}\n'))).rejects.toThrow(/EEXIST/);
    expect(fs.readFileSync(target, 'utf8')).toBe('kept');
  });
});
