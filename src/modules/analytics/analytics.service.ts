import type { Kysely } from 'kysely';
import type { Dialect } from '../../db/database.ts';
import type { Database } from '../../db/schema.ts';
import { badRequest } from '../../http/errors.ts';
import { countTasksByStatus } from '../tasks/tasks.repository.ts';
import { answeredByPerDay, conclusionsPerDay, interruptions, toolCalls, turnLatency, type Range } from './analytics.repository.ts';
import { DEFAULT_RANGE_DAYS, MAX_RANGE_DAYS, type AnalyticsOverview, type OverviewQuery } from './analytics.schemas.ts';

const DAY_MS = 86_400_000;

/** RFC 3339 allows what Date does not read (a leap second, a lower-case t): those are a 400, not a 500. */
function instant(field: 'from' | 'to', text: string): Date {
  const date = new Date(text);
  if (Number.isNaN(date.getTime())) throw badRequest('Invalid range', [{ path: field, message: 'must be a date-time this service can read' }]);
  return date;
}

/**
 * The range asked for, defaulted from the app clock and written the one way the service
 * stores timestamps (ISO 8601 in UTC, milliseconds), so SQLite's text comparison is exact.
 */
export function resolveRange(query: OverviewQuery, now: Date): Range {
  const to = query.to ? instant('to', query.to) : now;
  const from = query.from ? instant('from', query.from) : new Date(to.getTime() - DEFAULT_RANGE_DAYS * DAY_MS);
  if (from > to) throw badRequest('Invalid range', [{ path: 'from', message: 'must not be after to' }]);
  if (to.getTime() - from.getTime() > MAX_RANGE_DAYS * DAY_MS) {
    throw badRequest('Invalid range', [{ path: 'from', message: `must be at most ${MAX_RANGE_DAYS} days before to` }]);
  }
  return { from: from.toISOString(), to: to.toISOString() };
}

/** Every UTC day [from, to) touches, oldest first (none for an empty range). */
export function utcDays(range: Range): string[] {
  const days: string[] = [];
  const end = Date.parse(range.to);
  for (let at = Date.parse(range.from.slice(0, 10)); at < end; at += DAY_MS) days.push(new Date(at).toISOString().slice(0, 10));
  return days;
}

export async function analyticsOverview(db: { kysely: Kysely<Database>; dialect: Dialect }, organizationId: string, range: Range): Promise<AnalyticsOverview> {
  const { kysely, dialect } = db;
  const perDay = await conclusionsPerDay(kysely, dialect, organizationId, range);
  const answered = await answeredByPerDay(kysely, dialect, organizationId, range);
  const latency = await turnLatency(kysely, organizationId, range);
  const response = await turnLatency(kysely, organizationId, range, 'response_ms');
  const cuts = await interruptions(kysely, organizationId, range);
  const tools = await toolCalls(kysely, dialect, organizationId, range);
  const tasks = await countTasksByStatus(kysely, organizationId);

  const days = new Map(utcDays(range).map((day) => [day, { day, completed: 0, abandoned: 0, failed: 0 }]));
  for (const { day, outcome, n } of perDay) {
    const counts = days.get(day);
    if (counts && (outcome === 'completed' || outcome === 'abandoned' || outcome === 'failed')) counts[outcome] += n;
  }
  const answeredDays = new Map(utcDays(range).map((day) => [day, { day, human: 0, voicemail: 0, screening: 0, unknown: 0 }]));
  for (const { day, answeredBy, n } of answered) {
    const counts = answeredDays.get(day);
    if (counts && (answeredBy === 'human' || answeredBy === 'voicemail' || answeredBy === 'screening' || answeredBy === 'unknown')) counts[answeredBy] += n;
  }
  return {
    ...range,
    callsPerDay: [...days.values()],
    answeredByPerDay: [...answeredDays.values()],
    turnLatency: { turns: latency.turns, p50Ms: latency.p50, p95Ms: latency.p95 },
    responseLatency: { turns: response.turns, p50Ms: response.p50, p95Ms: response.p95 },
    interruptions: { ...cuts, falseRate: cuts.real + cuts.false ? cuts.false / (cuts.real + cuts.false) : 0 },
    tools: { ...tools, errorRate: tools.invocations ? tools.errors / tools.invocations : 0 },
    tasks: {
      pending: tasks.PENDING, scheduled: tasks.SCHEDULED, inProgress: tasks.IN_PROGRESS,
      completed: tasks.COMPLETED, failed: tasks.FAILED, cancelled: tasks.CANCELLED,
    },
  };
}
