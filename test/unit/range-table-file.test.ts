import { AddressRanges } from '../../core/enrichment/address-ranges';
import { decodeRangeTable, encodeRangeTable } from '../../core/enrichment/range-table-file';

const v4Csv = ['1.0.0.0,1.0.0.255,13335,"Cloudflare, Inc."', '1.0.4.0,1.0.7.255,38803,Gtelecom Pty Ltd', '16778240,16779263,38803,Gtelecom Pty Ltd'].join('\n');
const v6Csv = ['2001::,2001::ffff:ffff:ffff:ffff:ffff:ffff,6939,Hurricane Electric LLC', '2001:200::,2001:200:1b9:ffff:ffff:ffff:ffff:ffff,2500,WIDE "Project"'].join('\n');
const source = 'range-table 1 as @ip-location-db/asn@test stamp';
const table = AddressRanges.fromAsCsv(v4Csv, v6Csv);
const probes = ['1.0.0.0', '1.0.0.255', '1.0.1.0', '1.0.5.9', '1.0.8.1', '0.255.255.255', '2001::1', '2001:200:1b9:ffff::1', '2001:200:1ba::', '::ffff:1.0.0.7'];

const decoded = (bytes: Buffer, from = source) => {
  const result = decodeRangeTable(bytes, from);
  return 'ranges' in result ? result.ranges : result.refused;
};

describe('a range table in a file', () => {
  test('reads back as a table answering every address as the parsed one does, names included', () => {
    const back = decoded(encodeRangeTable(source, table));
    if (typeof back === 'string') throw new Error(back);
    expect(probes.map((p) => back.lookup(p))).toEqual(probes.map((p) => table.lookup(p)));
    expect([...back.names]).toEqual([...table.names]);
    expect(back.size).toBe(table.size);
  });

  test('reads back from a buffer at an odd offset', () => {
    const bytes = encodeRangeTable(source, table);
    const shifted = Buffer.alloc(bytes.length + 1);
    bytes.copy(shifted, 1);
    const back = decoded(shifted.subarray(1));
    expect(typeof back === 'string' ? back : back.lookup('1.0.5.9')).toBe(38803);
  });

  test('is refused when made from other files', () => {
    expect(decoded(encodeRangeTable(source, table), 'range-table 1 as @ip-location-db/asn@newer stamp')).toBe('made from other files');
  });

  test('is refused when one byte of its body changed', () => {
    const bytes = encodeRangeTable(source, table);
    bytes[bytes.length - 20]! ^= 1;
    expect(decoded(bytes)).toBe('checksum does not match');
  });

  test('is refused when cut short or grown', () => {
    const bytes = encodeRangeTable(source, table);
    expect(decoded(bytes.subarray(0, bytes.length - 4))).toBe('length does not match its header');
    expect(decoded(Buffer.concat([bytes, Buffer.alloc(4)]))).toBe('length does not match its header');
    expect(decoded(bytes.subarray(0, 20))).toBe('header cut short');
  });

  test('is refused when it is not a range table file at all', () => {
    expect(decoded(Buffer.from('first,last,asn\n'))).toBe('not a range table file');
    expect(decoded(Buffer.alloc(0))).toBe('not a range table file');
    const noHeader = Buffer.concat([Buffer.from('NTRANGE1'), Buffer.from([4, 0, 0, 0]), Buffer.from('null')]);
    expect(decoded(noHeader)).toBe('header is not one');
  });

  test('is refused when its ranges are out of order, checksum and all', () => {
    const unsorted = AddressRanges.fromAsCsv(['2.0.0.0,2.0.0.255,1,A', '1.0.0.0,1.0.0.255,2,B'].join('\n'), '');
    expect(decoded(encodeRangeTable(source, unsorted))).toBe('ranges out of order');
    const inverted = AddressRanges.fromAsCsv('1.0.0.9,1.0.0.1,1,A', '');
    expect(decoded(encodeRangeTable(source, inverted))).toBe('ranges out of order');
  });
});
