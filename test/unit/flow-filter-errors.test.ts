import { FilterError, filterLimits } from '../../core/analytics/filter/ast';
import { flowFilterCatalog } from '../../core/analytics/filter/catalog';
import { readFilter } from '../../core/analytics/filter/check';

/** Every way a filter text fails, each answered with its place (offset, line:column), what was expected and what was found. */
function failure(text: string): { at: string; expected: string; found: string; message: string } {
  try {
    readFilter(text, flowFilterCatalog);
  } catch (err) {
    if (!(err instanceof FilterError)) throw err;
    return { at: `${err.at.offset} ${err.at.line}:${err.at.column}`, expected: err.expected, found: err.found, message: err.message };
  }
  throw new Error(`no error for ${text}`);
}

describe('filter errors name the place, what was expected and what was found', () => {
  const cases: Array<[string, string, string, string]> = [
    ['dst_as =', '8 1:9', 'a value', 'the end of the filter'],
    ['dst_as 13335', '7 1:8', 'an operator (= != < <= > >= << !<<), IN, NOT IN', '"13335"'],
    ['dst_as NOT = 1', '11 1:12', 'IN, LIKE or ILIKE after NOT', '"="'],
    ['(dst_as = 1', '11 1:12', 'AND, OR or ")" closing the "(" at 1:1', 'the end of the filter'],
    ['dst_as = 1)', '10 1:11', 'AND, OR or the end of the filter (this ")" closes nothing)', '")"'],
    ['dst_as = 1 AND', '14 1:15', 'a dimension name, NOT or "("', 'the end of the filter'],
    ['NOT', '3 1:4', 'a dimension name, NOT or "("', 'the end of the filter'],
    ['dst_as = 1 OR OR', '14 1:15', 'a dimension name, NOT or "("', '"OR"'],
    ['dst_as IN 1', '10 1:11', '"(" opening the list of values', '"1"'],
    ['dst_as IN (1 2)', '13 1:14', '"," or ")" closing the list opened at 1:11', '"2"'],
    ['dst_as IN (1,)', '13 1:14', 'a value', '")"'],
    ["protocol LIKE tcp", '14 1:15', 'a quoted pattern', '"tcp"'],
    ["dst_as = 'x", '11 1:12', "' closing the string opened at 1:10", 'the end of the filter'],
    ['dst_as = 1 /* open', '18 1:19', '"*/" closing the comment opened at 1:12', 'the end of the filter'],
    ['dst_as # 1', '7 1:8', 'a dimension, a value, an operator or a parenthesis', '"#"'],
    ['nope = 1', '0 1:1', 'a dimension (one of src_ip, dst_ip', '"nope"'],
    ['src_ip = 10.0.0.0/33', '9 1:10', 'an IPv4 or IPv6 address or prefix', '"10.0.0.0/33"'],
    ["src_ip = 'example.com'", '9 1:10', 'an IPv4 or IPv6 address or prefix', '"example.com"'],
    ['dst_as = 4294967296', '9 1:10', 'a whole number from 0 to 4294967295 (or AS followed by one)', '"4294967296"'],
    ['dst_port = AS80', '11 1:12', 'a whole number from 0 to 65535', '"AS80"'],
    ["dst_port = '80'", '11 1:12', 'a whole number', '"80"'],
    ['protocol = tcp', '11 1:12', 'a quoted string', '"tcp"'],
    ["dst_as LIKE '1%'", '0 1:1', 'an operator that dst_as (number) takes: = != < <= > >= IN NOT IN', 'LIKE'],
    ['src_ip < 10.0.0.1', '0 1:1', 'an operator that src_ip (address) takes: = != << !<< IN NOT IN', '<'],
    ["protocol >= 'a'", '0 1:1', 'an operator that protocol (string) takes', '>='],
    ['dst_port << 80', '0 1:1', 'an operator that dst_port (number) takes', '<<'],
    ['dst_as = 1\n  AND\n  src_port = x', '30 3:14', 'a whole number from 0 to 65535', '"x"'],
  ];
  test.each(cases)('%j fails at %s', (text, at, expected, found) => {
    const f = failure(text);
    expect(f.at).toBe(at);
    expect(f.expected).toContain(expected);
    expect(f.found).toBe(found);
    expect(f.message).toBe(`invalid filter at ${at.split(' ')[1]} (offset ${at.split(' ')[0]}): expected ${f.expected}, found ${found}`);
  });

  test('the error is a 400 VALIDATION_ERROR whose detail names the filter parameter', () => {
    try {
      readFilter('dst_as =', flowFilterCatalog);
    } catch (err) {
      expect(err).toMatchObject({ code: 'VALIDATION_ERROR', status: 400, details: [{ path: 'filter', message: 'at 1:9 (offset 8): expected a value (a number, a quoted string, an address or a prefix), found the end of the filter' }] });
    }
    expect.assertions(1);
  });
});

describe('hostile filters stop at their bounds', () => {
  test('a text longer than the limit is refused at the first character past it', () => {
    const f = failure(`dst_as = 1 OR ${'x'.repeat(filterLimits.maxLength)}`);
    expect(f).toMatchObject({ at: `${filterLimits.maxLength} 1:${filterLimits.maxLength + 1}`, expected: `at most ${filterLimits.maxLength} characters` });
  });

  test('nesting deeper than the limit is refused at the first parenthesis or NOT too many', () => {
    const deep = '('.repeat(filterLimits.maxDepth) + 'dst_as = 1' + ')'.repeat(filterLimits.maxDepth);
    expect(readFilter(deep, flowFilterCatalog)).toBeDefined();
    expect(failure('(' + deep + ')')).toMatchObject({ at: `${filterLimits.maxDepth} 1:${filterLimits.maxDepth + 1}`, expected: `at most ${filterLimits.maxDepth} nested parentheses or NOTs` });
    expect(failure('NOT '.repeat(filterLimits.maxDepth + 1) + 'dst_as = 1').at).toBe(`${4 * filterLimits.maxDepth} 1:${4 * filterLimits.maxDepth + 1}`);
  });

  test('more conditions, list values or values than the limits are refused where the excess starts', () => {
    const terms = Array.from({ length: filterLimits.maxTerms + 1 }, (_, i) => `dst_as = ${i}`);
    expect(failure(terms.join(' OR '))).toMatchObject({ expected: `at most ${filterLimits.maxTerms} conditions`, at: `${terms.slice(0, -1).join(' OR ').length + 4} 1:${terms.slice(0, -1).join(' OR ').length + 5}` });
    const list = `dst_as IN (${Array.from({ length: filterLimits.maxListValues + 1 }, (_, i) => i).join(',')})`;
    expect(failure(list).expected).toBe(`at most ${filterLimits.maxListValues} values in a list`);
    const lists = Array.from({ length: 11 }, () => `dst_as IN (${Array.from({ length: 100 }, (_, i) => i).join(',')})`);
    expect(failure(lists.join(' OR ')).expected).toBe(`at most ${filterLimits.maxValues} values in a filter`);
  });
});
