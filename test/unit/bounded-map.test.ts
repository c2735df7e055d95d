import { dropOldest, setNewest } from '../../core/bounded-map';

describe('a bounded map', () => {
  it('drops the entry set longest ago once it holds more than its bound', () => {
    const map = new Map<string, number>();
    for (const [i, key] of ['a', 'b', 'c'].entries()) setNewest(map, key, i, 2);
    expect([...map.keys()]).toEqual(['b', 'c']);
  });

  it('keeps an entry set again over one set after it the first time', () => {
    const map = new Map<string, number>();
    setNewest(map, 'a', 1, 2);
    setNewest(map, 'b', 2, 2);
    setNewest(map, 'a', 3, 2);
    setNewest(map, 'c', 4, 2);
    expect([...map]).toEqual([
      ['a', 3],
      ['c', 4],
    ]);
  });

  it('brings a set down to its bound, oldest first', () => {
    const set = new Set([1, 2, 3, 4]);
    dropOldest(set, 1);
    expect([...set]).toEqual([4]);
  });
});
