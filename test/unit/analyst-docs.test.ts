import fs from 'node:fs';
import path from 'node:path';
import { flowFilterCatalog } from '../../core/analytics/filter/catalog';
import { filterKeywords } from '../../core/analytics/filter/parse';
import { flowUnits } from '../../core/analytics/rates';
import { viewStateSchema } from '../../core/saved-views';

/** docs/analyst-queries.md follows the code: every dimension, keyword, unit and saved-view field it serves is on the page. */
const page = fs.readFileSync(path.join(__dirname, '../../docs/analyst-queries.md'), 'utf8');
const missing = (names: readonly string[]) => names.filter((n) => !page.includes(`\`${n}\``));

describe('the analyst queries page', () => {
  test('names every dimension of the filter catalog', () => {
    expect(missing(Object.keys(flowFilterCatalog.dimensions))).toEqual([]);
  });

  test('names every keyword of the filter language', () => {
    expect(missing(filterKeywords.filter((k) => !['NOTIN', 'UNLIKE', 'IUNLIKE'].includes(k)))).toEqual([]);
    expect(['NOTIN', 'UNLIKE', 'IUNLIKE'].filter((k) => !page.includes(k))).toEqual([]);
  });

  test('names every unit and every field of a saved view\'s state', () => {
    expect(missing([...flowUnits, ...Object.keys(viewStateSchema.shape)])).toEqual([]);
  });
});
