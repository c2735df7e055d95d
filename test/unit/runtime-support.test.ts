import { endOfLifeWarning } from '../../service/runtime-support';

const on = (day: string) => new Date(`${day}T12:00:00Z`);

test('node 20 after its end of life (April 2026) gets a warning naming the date and the tested line', () => {
  expect(endOfLifeWarning('v20.20.2', on('2026-11-29'))).toBe(
    'node v20.20.2 reached its end of life on 2026-04-30 and receives no security fixes: run node 24, the tested line',
  );
});

test('node 20 before its end of life, and node 24 and 26 now, get no warning', () => {
  expect(endOfLifeWarning('v20.20.2', on('2026-04-29'))).toBeUndefined();
  expect(endOfLifeWarning('v24.22.3', on('2026-11-29'))).toBeUndefined();
  expect(endOfLifeWarning('v26.12.1', on('2026-11-29'))).toBeUndefined();
});

test('node 22 is warned about once its end of life (April 2027) has passed', () => {
  expect(endOfLifeWarning('v22.22.0', on('2026-11-29'))).toBeUndefined();
  expect(endOfLifeWarning('v22.22.0', on('2027-05-01'))).toMatch(/^node v22\.22\.0 reached its end of life on 2027-04-30/);
});

test('a line older than the schedule the code knows is ended, and a newer one is taken as supported', () => {
  expect(endOfLifeWarning('v16.20.2', on('2026-11-29'))).toBe('node v16.20.2 reached its end of life and receives no security fixes: run node 24, the tested line');
  expect(endOfLifeWarning('v28.0.0', on('2026-11-29'))).toBeUndefined();
});
