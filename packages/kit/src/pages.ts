// The one page rule of every list of the API: `pageNumber` from 1 (default 1), `pageSize` from 1 to
// 1,000 (default 50; 0 is proto3's "not given"), and a window that stays a safe integer. Out of
// range is a 400 `validation_failed` naming the parameter, in every service alike.
import { invalid } from './errors';

export const MAX_PAGE_SIZE = 1000;
export const DEFAULT_PAGE_SIZE = 50;

export interface Page {
  pageNumber: number;
  pageSize: number;
  /** Items before the page. */
  skip: number;
}

/** The page a list request asks for; `max` narrows the largest page (a list whose items are large). */
export function pageOf(pageNumber: number, pageSize: number, max = MAX_PAGE_SIZE): Page {
  const number = pageNumber || 1;
  const size = pageSize || DEFAULT_PAGE_SIZE;
  if (!Number.isSafeInteger(number) || number < 1) {
    throw invalid('validation_failed', `pageNumber must be at least 1`, [{ path: 'query.pageNumber', problem: 'must be at least 1' }]);
  }
  if (!Number.isSafeInteger(size) || size < 1 || size > max || !Number.isSafeInteger((number - 1) * size)) {
    throw invalid('validation_failed', `pageSize must be 1-${max}`, [{ path: 'query.pageSize', problem: `must be 1-${max}` }]);
  }
  return { pageNumber: number, pageSize: size, skip: (number - 1) * size };
}

/** The page members of a list answer (`totalItems` as proto's int64 string). */
export function pageAnswer(page: Pick<Page, 'pageNumber' | 'pageSize'>, totalItems: number): { pageNumber: number; pageSize: number; totalItems: string; totalPages: number } {
  return { pageNumber: page.pageNumber, pageSize: page.pageSize, totalItems: String(totalItems), totalPages: Math.ceil(totalItems / page.pageSize) };
}
