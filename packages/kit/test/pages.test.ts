import { DomainError, pageAnswer, pageOf } from '../src';

const refusal = (f: () => unknown) => {
  try {
    f();
  } catch (err) {
    return err instanceof DomainError ? { errorId: err.errorId, path: err.details?.[0]?.path } : err;
  }
  throw new Error('not refused');
};

describe('the page rule of every list', () => {
  it('defaults to page 1 of 50 (0 is proto3 for "not given") and skips whole pages', () => {
    expect(pageOf(0, 0)).toEqual({ pageNumber: 1, pageSize: 50, skip: 0 });
    expect(pageOf(3, 20)).toEqual({ pageNumber: 3, pageSize: 20, skip: 40 });
    expect(pageOf(1, 1000).pageSize).toBe(1000);
  });

  it.each([
    [-1, 10, 'query.pageNumber'],
    [1.5, 10, 'query.pageNumber'],
    [1, 1001, 'query.pageSize'],
    [1, -5, 'query.pageSize'],
    [2 ** 52, 1000, 'query.pageSize'],
  ])('refuses page %p size %p, naming %s', (n, s, path) => expect(refusal(() => pageOf(n, s))).toEqual({ errorId: 'validation_failed', path }));

  it('a list of large items may narrow the largest page', () => {
    expect(pageOf(1, 100, 100).pageSize).toBe(100);
    expect(refusal(() => pageOf(1, 101, 100))).toEqual({ errorId: 'validation_failed', path: 'query.pageSize' });
  });

  it('answers the page members with the total as int64 text and whole pages', () => {
    expect(pageAnswer({ pageNumber: 2, pageSize: 20 }, 41)).toEqual({ pageNumber: 2, pageSize: 20, totalItems: '41', totalPages: 3 });
    expect(pageAnswer({ pageNumber: 1, pageSize: 50 }, 0)).toEqual({ pageNumber: 1, pageSize: 50, totalItems: '0', totalPages: 0 });
  });
});
