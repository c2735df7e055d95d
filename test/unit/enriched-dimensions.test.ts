import { interfacesOfWalk, mergeInterfaces } from '../../core/enrichment/interfaces';
import { parseDimensionList, parseFilters, planFlowQuery } from '../../core/flow-query';
import { AppError } from '../../core/errors';

describe('enriched flow dimensions', () => {
  it('filters by interface names and classification as text, and by speed as a number', () => {
    expect(parseFilters({ in_if_name: 'et-0/0/3,xe-1/0/7', out_if_boundary: 'external', in_if_speed: '100000' })).toEqual([
      { dimension: 'in_if_name', kind: 'text', values: ['et-0/0/3', 'xe-1/0/7'] },
      { dimension: 'in_if_speed', kind: 'number', values: [100_000] },
      { dimension: 'out_if_boundary', kind: 'text', values: ['external'] },
    ]);
  });

  it('refuses a text value longer than 255 characters, naming the parameter', () => {
    let caught: unknown;
    try {
      parseFilters({ exporter_site: 'x'.repeat(256) });
    } catch (err) {
      caught = err;
    }
    expect(caught).toBeInstanceOf(AppError);
    expect((caught as AppError).details).toEqual([{ path: 'exporter_site', message: expect.stringMatching(/is not a value of at most 255 characters$/) as unknown }]);
  });

  it('groups by enriched dimensions and answers them from the dimension rollups, or the raw flows beside an address', () => {
    const by = parseDimensionList('in_if_provider,exporter_group', 'by', 3);
    expect(planFlowQuery(by, [])).toEqual({ source: 'dims' });
    expect(planFlowQuery([...by, 'dst_ip'], [])).toEqual({ source: 'raw', because: ['in_if_provider', 'exporter_group', 'dst_ip'] });
  });
});

describe('interfaces of a walk and static interfaces', () => {
  it('takes ifDescr where an agent has no ifName, and the static interface for its index', () => {
    const walk = interfacesOfWalk({
      name: new Map([[1, 'ge-0/0/1']]),
      alias: new Map([[1, 'uplink'], [2, 'spare']]),
      highSpeed: new Map([[1, 1000]]),
      descr: new Map([[2, 'GigabitEthernet0/2']]),
    });
    expect(walk).toEqual([
      { index: 1, name: 'ge-0/0/1', description: 'uplink', speed: 1000 },
      { index: 2, name: 'GigabitEthernet0/2', description: 'spare', speed: 0 },
    ]);
    expect(mergeInterfaces(walk, [{ index: 2, name: 'static', description: '', speed: 10 }])).toEqual([
      { index: 1, name: 'ge-0/0/1', description: 'uplink', speed: 1000, source: 'snmp' },
      { index: 2, name: 'static', description: '', speed: 10, source: 'static' },
    ]);
  });
});
