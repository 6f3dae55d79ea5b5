import { hostname } from 'node:os';
import type { Clock } from '../clock.ts';

/** A job a kind claimed: its id, and whatever the kind's `run` needs. */
export interface LeasedJob {
  readonly id: string;
}

/**
 * One kind of durable work (agent tasks, webhook deliveries): the kind owns its table and its
 * SQL, the runner owns the loop. Modelled on graphile-worker: a claim takes due rows with a
 * lease in one statement, renewal extends this worker's leases in one statement, and expired
 * leases (a worker that died) go back to the queue in one statement.
 */
export interface JobKind<J extends LeasedJob> {
  readonly name: string;
  /** Jobs of this kind this process runs at once. */
  readonly concurrency: number;
  /** How long a claim holds without renewal; renewed every third of it while the job runs. */
  readonly leaseMs: number;
  claim(request: { owner: string; now: Date; leaseUntil: Date; limit: number }): Promise<J[]>;
  run(job: J, signal: AbortSignal): Promise<void>;
  /** Extends `owner`'s leases on `ids`; answers the ids it still holds (the rest were lost: cancelled, reclaimed). */
  renew(request: { owner: string; ids: string[]; leaseUntil: Date }): Promise<Set<string>>;
  /** Settles jobs whose lease expired; answers how many. */
  reclaim(now: Date): Promise<number>;
}

/** Periodic housekeeping (retention, expiry): idempotent, safe to run in every process at once. */
export interface Sweep {
  readonly name: string;
  readonly everyMs: number;
  /** Answers how many rows it changed. */
  run(now: Date): Promise<number>;
}

export interface RunnerLog {
  warn(o: object, m?: string): void;
  error(o: object, m?: string): void;
}

export interface TickResult {
  claimed: Record<string, number>;
  reclaimed: Record<string, number>;
  swept: Record<string, number>;
}

interface Running {
  controller: AbortController;
  done: Promise<void>;
}

interface Registered {
  kind: JobKind<LeasedJob>;
  running: Map<string, Running>;
  /** The last claim found work: more may be due than one poll takes. */
  backlog: boolean;
}

/**
 * The one loop that runs durable work in a process: every poll it reclaims expired leases,
 * claims what is due for each registered kind up to its free slots, and runs the sweeps that
 * are due. Features register their kinds and sweeps (app.ts composes them); the runner knows
 * nothing of tasks or webhooks. Time comes from the injected clock; tests call tick() by hand.
 */
export class Runner {
  readonly workerId: string;
  private readonly kinds = new Map<string, Registered>();
  private readonly sweeps: { sweep: Sweep; nextAt: number }[] = [];
  private readonly pollMs: number;
  private poller: NodeJS.Timeout | null = null;
  private renewer: NodeJS.Timeout | null = null;
  private ticking: Promise<TickResult> | null = null;
  private stopped = false;

  constructor(
    private readonly clock: Clock,
    private readonly log: RunnerLog,
    options: { pollMs?: number; workerId?: string } = {},
  ) {
    this.workerId = options.workerId ?? `${hostname()}:${process.pid}:${crypto.randomUUID().slice(0, 8)}`;
    this.pollMs = options.pollMs ?? 1_000;
  }

  register<J extends LeasedJob>(kind: JobKind<J>): this {
    if (this.kinds.has(kind.name)) throw new Error(`job kind ${kind.name} is registered twice`);
    this.kinds.set(kind.name, { kind: kind, running: new Map(), backlog: false });
    return this;
  }

  addSweep(sweep: Sweep): this {
    this.sweeps.push({ sweep, nextAt: 0 });
    return this;
  }

  start(): void {
    this.stopped = false;
    if (this.poller) return;
    this.poller = setInterval(this.poll, this.pollMs);
    this.poll();
  }

  /** Stops claiming; running jobs get `graceMs` to finish, the rest are aborted (their leases bring them back). */
  async stop(graceMs = 10_000): Promise<void> {
    this.stopped = true;
    if (this.poller) clearInterval(this.poller);
    this.poller = null;
    await this.ticking?.catch(() => undefined);
    const all = () => Promise.all([...this.kinds.values()].flatMap((k) => [...k.running.values()].map((r) => r.done)));
    await Promise.race([all(), new Promise((resolve) => setTimeout(resolve, graceMs).unref())]);
    for (const k of this.kinds.values()) for (const r of k.running.values()) r.controller.abort();
    await all();
  }

  /** Aborts one running job of this process (a cancelled task: hang up now). */
  abort(kind: string, id: string): void {
    this.kinds.get(kind)?.running.get(id)?.controller.abort();
  }

  /** Resolves when this process's run of a job has finished and been recorded (tests). */
  async whenDone(kind: string, id: string): Promise<void> {
    await this.kinds.get(kind)?.running.get(id)?.done;
  }

  running(kind: string): number {
    return this.kinds.get(kind)?.running.size ?? 0;
  }

  /** Resolves when every job this process started has finished (tests). */
  async idle(): Promise<void> {
    for (;;) {
      const all = [...this.kinds.values()].flatMap((k) => [...k.running.values()].map((r) => r.done));
      if (!all.length) return;
      await Promise.all(all);
    }
  }

  tick(): Promise<TickResult> {
    // One tick at a time; an overlapping call joins the one in flight.
    this.ticking ??= this.doTick().finally(() => (this.ticking = null));
    return this.ticking;
  }

  /** Runs every sweep now, whatever its schedule (tests, and `parley doctor`-style tooling). */
  async sweepNow(): Promise<Record<string, number>> {
    const swept: Record<string, number> = {};
    const now = this.clock.now();
    for (const entry of this.sweeps) swept[entry.sweep.name] = await this.runSweep(entry, now);
    return swept;
  }

  private readonly poll = (): void => {
    void this.tick().catch((err: unknown) => this.log.error({ err }, 'job runner tick failed'));
  };

  private async doTick(): Promise<TickResult> {
    const result: TickResult = { claimed: {}, reclaimed: {}, swept: {} };
    if (this.stopped) return result;
    for (const [name, entry] of this.kinds) {
      result.reclaimed[name] = await entry.kind.reclaim(this.clock.now());
      result.claimed[name] = await this.claim(entry);
    }
    const now = this.clock.now();
    for (const entry of this.sweeps) {
      if (now.getTime() >= entry.nextAt) result.swept[entry.sweep.name] = await this.runSweep(entry, now);
    }
    return result;
  }

  private async runSweep(entry: { sweep: Sweep; nextAt: number }, now: Date): Promise<number> {
    entry.nextAt = now.getTime() + entry.sweep.everyMs;
    try {
      return await entry.sweep.run(now);
    } catch (err) {
      this.log.error({ err, sweep: entry.sweep.name }, 'sweep failed; it runs again at its next turn');
      return 0;
    }
  }

  private async claim(entry: Registered): Promise<number> {
    const free = entry.kind.concurrency - entry.running.size;
    if (free <= 0 || this.stopped) return 0;
    const now = this.clock.now();
    const jobs = await entry.kind.claim({ owner: this.workerId, now, leaseUntil: new Date(now.getTime() + entry.kind.leaseMs), limit: free });
    // More may be due while a claim finds work, or while jobs still run: a kind's fairness caps can
    // make a claim come back empty although work waits for a running job's slot.
    entry.backlog = jobs.length > 0 || entry.running.size > 0;
    for (const job of jobs) this.launch(entry, job);
    return jobs.length;
  }

  private launch(entry: Registered, job: LeasedJob): void {
    const controller = new AbortController();
    const done = entry.kind.run(job, controller.signal)
      .catch((err: unknown) => this.log.error({ err, kind: entry.kind.name, id: job.id }, 'job failed unexpectedly; its lease brings it back'))
      .finally(() => {
        entry.running.delete(job.id);
        if (!this.anyRunning() && this.renewer) {
          clearInterval(this.renewer);
          this.renewer = null;
        }
        // Keep the pipe full through a backlog instead of waiting for the next poll (when started; tests tick by hand).
        if (this.poller && entry.backlog && entry.running.size <= entry.kind.concurrency / 2) {
          void this.claim(entry).catch((err: unknown) => this.log.error({ err, kind: entry.kind.name }, 'claim failed'));
        }
      });
    entry.running.set(job.id, { controller, done });
    this.renewer ??= setInterval(() => void this.renewAll(), Math.max(50, this.shortestLease() / 3));
  }

  private anyRunning(): boolean {
    return [...this.kinds.values()].some((k) => k.running.size > 0);
  }

  private shortestLease(): number {
    return Math.min(...[...this.kinds.values()].map((k) => k.kind.leaseMs));
  }

  /** One statement per kind extends every lease this process holds; a job whose lease was lost is aborted. */
  private async renewAll(): Promise<void> {
    const now = this.clock.now().getTime();
    for (const entry of this.kinds.values()) {
      const ids = [...entry.running.keys()];
      if (!ids.length) continue;
      try {
        const held = await entry.kind.renew({ owner: this.workerId, ids, leaseUntil: new Date(now + entry.kind.leaseMs) });
        for (const id of ids) if (!held.has(id)) entry.running.get(id)?.controller.abort();
      } catch (err) {
        this.log.warn({ err, kind: entry.kind.name }, 'could not renew leases; trying again');
      }
    }
  }
}
