import { csvField, toCsv } from '../../core/csv';
import { parseCsv } from '../support/csv';
import { flowSeriesTable, metricSeriesTable, recordsTable } from '../../api/csv-answer';

describe('the CSV serializer', () => {
  it('writes a header row and one line per row, each ended by CRLF', () => {
    expect(toCsv({ columns: ['src_ip', 'bytes'], rows: [['10.0.0.1', 1500], ['10.0.0.2', 40]] })).toBe('src_ip,bytes\r\n10.0.0.1,1500\r\n10.0.0.2,40\r\n');
  });

  it('writes a table without rows as its header alone', () => {
    expect(toCsv({ columns: ['t', 'avg'], rows: [] })).toBe('t,avg\r\n');
  });

  it('quotes a field holding a comma, a quote, CR or LF, and doubles its quotes', () => {
    expect(csvField('a,b')).toBe('"a,b"');
    expect(csvField('say "hi"')).toBe('"say ""hi"""');
    expect(csvField('line\nbreak')).toBe('"line\nbreak"');
    expect(csvField('cr\rhere')).toBe('"cr\rhere"');
    expect(csvField('plain')).toBe('plain');
  });

  it('writes numbers as JSON does, null as the empty field, and a non-finite number as empty', () => {
    expect([1.5, -3, 0, 1e21, null, undefined, Number.NaN, true].map(csvField)).toEqual(['1.5', '-3', '0', '1e+21', '', '', '', 'true']);
  });

  it('neutralizes text a spreadsheet would run as a formula with a leading quote', () => {
    expect(csvField("=cmd|' /C calc'!A0")).toBe("'=cmd|' /C calc'!A0");
    expect(['+1', '-1+2', '@SUM(A1)', '\tx'].map(csvField)).toEqual(["'+1", "'-1+2", "'@SUM(A1)", "'\tx"]);
  });

  it('quotes a neutralized formula that also holds a separator', () => {
    expect(csvField('=HYPERLINK("http://x","a,b")')).toBe('"\'=HYPERLINK(""http://x"",""a,b"")"');
    expect(csvField('\rnew')).toBe('"\'\rnew"');
  });

  it('reads back, by an RFC 4180 parser, the very values it was given', () => {
    const hostile = ['=cmd|x', 'a,"b"', 'x\r\ny', '', 'é ü 中'];
    const csv = toCsv({ columns: ['v'], rows: hostile.map((v) => [v]) });
    expect(parseCsv(csv).slice(1).map((r) => r[0])).toEqual(["'=cmd|x", 'a,"b"', 'x\r\ny', '', 'é ü 中']);
  });
});

describe('the CSV tables of the analyst answers', () => {
  it('takes the columns of records in the order they first appear, and leaves a missing field empty', () => {
    expect(recordsTable([{ a: 1 }, { a: 2, b: 'x' }], ['z'])).toEqual({ columns: ['a', 'b'], rows: [[1, undefined], [2, 'x']] });
  });

  it('takes the fallback columns when there is no record', () => {
    expect(recordsTable([], ['t', 'avg', 'samples'])).toEqual({ columns: ['t', 'avg', 'samples'], rows: [] });
  });

  it('writes a flow series in long form: a row per series and step, the key beside the time', () => {
    const body = {
      series: [
        { key: { dst_port: 443 }, points: [{ t: '2026-01-01T00:00:00.000Z', bps: 8, pps: 1, bytes: 60, packets: 60 }] },
        { key: { other: true }, points: [{ t: '2026-01-01T00:00:00.000Z', bps: 0, pps: 0, bytes: 0, packets: 0 }] },
      ],
    };
    expect(flowSeriesTable(body)).toEqual({
      columns: ['t', 'dst_port', 'other', 'bps', 'pps', 'bytes', 'packets'],
      rows: [
        ['2026-01-01T00:00:00.000Z', 443, undefined, 8, 1, 60, 60],
        ['2026-01-01T00:00:00.000Z', undefined, true, 0, 0, 0, 0],
      ],
    });
  });

  it('writes a metric series a row per step', () => {
    expect(metricSeriesTable({ data: [{ t: 'x', avg: 2.5, samples: 4 }] })).toEqual({ columns: ['t', 'avg', 'samples'], rows: [['x', 2.5, 4]] });
  });
});
