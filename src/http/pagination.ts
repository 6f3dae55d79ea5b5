import { Type, type TProperties } from 'typebox';
import { sql, type SelectQueryBuilder } from 'kysely';
import type { FastifyRequest } from 'fastify';
import { stamp } from './envelope.ts';
import { badRequest } from './errors.ts';

/** Beyond this an offset means nothing useful and only costs a scan (and 1e308 overflows the database). */
export const MAX_PAGE = 1_000_000;

export interface PageQuery {
  page: number;
  size: number;
  sort: string[];
}

export interface Page<T> {
  items: T[];
  page: number;
  size: number;
  totalElements: number;
}

/** Sortable API properties of one resource, each mapped to its indexed column. */
export type SortColumns = Readonly<Record<string, string>>;

export const BASE_SORT: SortColumns = { name: 'name', createdAt: 'created_at', updatedAt: 'updated_at' };

/**
 * The query-string schema of a list: page, size, repeatable sort, plus the resource's filters
 * (schemas too, so /openapi.json lists them and a wrong value is a 400 naming the allowed ones).
 */
export function listQuery<F extends TProperties = Record<never, never>>(sortable: SortColumns, filters?: F, defaultSort = 'name,asc') {
  const names = Object.keys(sortable).join('|');
  const schema = Type.Object(
    {
      page: Type.Integer({ minimum: 0, maximum: MAX_PAGE, default: 0, description: '0-indexed page number' }),
      size: Type.Integer({ minimum: 1, maximum: 100, default: 20, description: 'Items per page' }),
      sort: Type.Array(
        Type.String({ pattern: `^(${names})(,(asc|desc|ASC|DESC))?$` }),
        {
          default: [defaultSort],
          maxItems: 5,
          description: `property,direction; repeatable. Properties: ${Object.keys(sortable).join(', ')}`,
        },
      ),
      ...(filters ?? ({} as F)),
    },
    { additionalProperties: false },
  );
  // page, size and sort have defaults that validation fills in, so handlers always see them (the
  // static type says so) while clients need not send them: they are not `required` on the wire.
  const wire = schema as { required?: string[] };
  wire.required = (wire.required ?? []).filter((name) => !['page', 'size', 'sort'].includes(name));
  return schema;
}

interface SortKey {
  column: string;
  direction: 'asc' | 'desc';
}

export function parseSort(sort: readonly string[], sortable: SortColumns): SortKey[] {
  const keys: SortKey[] = [];
  for (const [index, item] of sort.entries()) {
    const [property = '', dir = 'asc'] = item.split(',');
    const column = sortable[property];
    const direction = dir.toLowerCase();
    if (!column || (direction !== 'asc' && direction !== 'desc')) {
      throw badRequest('Invalid sort', [{ path: `sort[${index}]`, message: `cannot sort by "${item}"` }]);
    }
    if (!keys.some((k) => k.column === column)) keys.push({ column, direction });
  }
  return keys;
}

/**
 * One page of a query. The order always ends on `id`, so pages are stable when sort values
 * tie; every sortable column has an index (scope, column, id), so the first pages cost the
 * same whatever the table size. The total comes from the caller (a kept counter, not COUNT(*)).
 */
export async function fetchPage<Row>(
  // eslint-disable-next-line @typescript-eslint/no-explicit-any -- any table, any selection
  query: SelectQueryBuilder<any, any, Row>,
  request: PageQuery,
  sortable: SortColumns,
  totalElements: number | (() => Promise<number>),
  options: { table?: string; tiebreak?: string } = {},
): Promise<Page<Row>> {
  const keys = parseSort(request.sort, sortable);
  let q = query;
  const prefix = options.table ? `${options.table}.` : '';
  for (const key of keys) q = q.orderBy(sql.ref(prefix + key.column), key.direction);
  q = q.orderBy(sql.ref(prefix + (options.tiebreak ?? 'id')), keys.at(-1)?.direction ?? 'asc');
  const items = await q.limit(request.size).offset(request.page * request.size).execute();
  const total = typeof totalElements === 'number' ? totalElements : await totalElements();
  return { items, page: request.page, size: request.size, totalElements: total };
}

export function pageBody<T>(request: FastifyRequest, page: Page<T>) {
  return {
    success: true,
    data: page.items,
    page: page.page,
    size: page.size,
    totalElements: page.totalElements,
    totalPages: Math.ceil(page.totalElements / page.size),
    timestamp: stamp(request),
    traceId: request.id,
  };
}
