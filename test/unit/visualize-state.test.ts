import { completionContext, filterProblem, reverseDimension, reverseFilter, stillFitting } from '../../console/src/views/visualize/filter-text';
import { viewStateSchema } from '../../core/saved-views';
import { defaultState, fromSavedState, hashState, readState, stateHash, toSavedState, type VisualizeState } from '../../console/src/views/visualize/state';

/** The visualize page's pure parts: its versioned URL, the reverse direction, and what completion completes. */
const known = (d: string) => ['src_as', 'dst_as', 'src_country', 'in_if_name', 'protocol'].includes(d);

describe("the visualize page's state", () => {
  const state: VisualizeState = { v: 1, filter: "src_country IN ('NL', 'DE') -- ours", by: ['src_as', 'in_if_name'], chart: 'sankey', unit: 'packets', range: '24h', previous: true, bidirectional: true };

  test('a state written into the URL reads back the same', () => {
    expect(hashState(stateHash(state), known)).toEqual({ state });
  });

  test("a state saved as a view is a document the API's schema takes, and opens as the same state", () => {
    const saved = viewStateSchema.parse(toSavedState(state));
    expect(saved).toMatchObject({ dimensions: ['src_as', 'in_if_name'], range: { last_seconds: 86_400 }, bidirectional: true });
    expect(fromSavedState(saved, known)).toEqual({ state });
  });

  test('a saved view whose range the page does not offer opens on the default range', () => {
    const saved = viewStateSchema.parse({ ...toSavedState(state), range: { last_seconds: 1234 } });
    expect(fromSavedState(saved, known).state.range).toBe(defaultState.range);
  });

  test('a link without a version is read as version 1', () => {
    expect(hashState('#/visualize?by=dst_as&chart=lines', known)?.state).toEqual({ ...defaultState, by: ['dst_as'], chart: 'lines' });
  });

  test('a field this console cannot read falls back to its default, the rest of the view kept', () => {
    expect(readState({ v: 1, chart: 'heatmap', unit: 'bits', range: '3y', by: 'src_as,gone_dimension', filter: 'x' }, known).state).toEqual({ ...defaultState, by: ['src_as'], filter: 'x' });
  });

  test('a view written by a newer console shows the defaults with a note saying so', () => {
    const read = readState({ v: 2, chart: 'table' }, known);
    expect(read.state).toEqual(defaultState);
    expect(read.note).toContain('newer console (version 2)');
  });

  test('the page has no URL state without a query', () => {
    expect(hashState('#/visualize', known)).toBeUndefined();
  });
});

describe('the reverse direction', () => {
  test('swaps source and destination, input and output dimensions', () => {
    expect(['src_as', 'dst_country', 'in_if_name', 'out_if_boundary', 'exporter_site', 'protocol'].map(reverseDimension)).toEqual(['dst_as', 'src_country', 'out_if_name', 'in_if_boundary', 'exporter_site', 'protocol']);
  });

  test("swaps the filter's dimension names and never a quoted value or a comment", () => {
    expect(reverseFilter("src_as = 13335 AND in_if_boundary = 'src_as' -- src_as\nOR NOT dst_ip << 10.0.0.0/8")).toBe("dst_as = 13335 AND out_if_boundary = 'src_as' -- src_as\nOR NOT src_ip << 10.0.0.0/8");
  });
});

describe('the filter box', () => {
  test('completes a dimension name at the start of a term', () => {
    expect(completionContext('src_as = 1 AND dst_c', 20)).toEqual({ kind: 'dimension', prefix: 'dst_c', start: 15 });
  });

  test('completes a value after a dimension and its operator', () => {
    expect(completionContext('dst_as = 133', 12)).toEqual({ kind: 'value', dimension: 'dst_as', prefix: '133', start: 9 });
  });

  test('completes a value inside an IN list, quoted or not', () => {
    expect(completionContext("src_country NOT IN ('NL', 'D", 28)).toEqual({ kind: 'value', dimension: 'src_country', prefix: 'D', start: 26 });
  });

  test('while the service is asked, only the suggestions that still fit the typed text stay offered', () => {
    const shown = [{ value: 'src_ip' }, { value: 'src_as' }, { value: 'src_as_name' }, { value: 'src_country' }];
    expect(stillFitting(shown, 'src_a').map((i) => i.value)).toEqual(['src_as', 'src_as_name']);
    expect(stillFitting(shown, 'SRC_AS').map((i) => i.value)).toEqual(['src_as', 'src_as_name']);
    expect(stillFitting(shown, 'dst')).toEqual([]);
  });

  test('an AS number typed with its AS prefix still fits the numbers offered', () => {
    expect(stillFitting([{ value: '13335' }, { value: '15169' }], 'AS133').map((i) => i.value)).toEqual(['13335']);
  });

  test('names a syntax error with its line and column, and an unknown dimension', () => {
    expect(filterProblem('src_as = 1 AND (')).toMatch(/^At 1:17: expected .*, found the end of the filter\.$/);
    expect(filterProblem('src_ass = 1')).toBe('Unknown dimension "src_ass".');
    expect(filterProblem("dst_as = AS13335 AND NOT src_country IN ('NL')")).toBeUndefined();
  });
});
