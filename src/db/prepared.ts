import type { Compilable, CompiledQuery } from 'kysely';
import type { Db } from './database.ts';

/**
 * A read built and compiled once, then run with new parameters through Db.read (committed
 * data only, never inside a transaction): Kysely's build and compile
 * steps cost more than running a primary-key read, which matters on the hottest paths.
 * The builder is called once with placeholder values; each placeholder's position in the
 * compiled parameters tells where the real argument goes; other parameters are constants.
 */
export function prepared<Args extends string[], Row>(db: Db, build: (...args: Args) => Compilable<Row>) {
  let compiled: { query: CompiledQuery<Row>; slots: number[] } | undefined;
  return async (...args: Args): Promise<Row | undefined> => {
    if (!compiled) {
      const placeholders = args.map((_, i) => `\u0000arg${i}\u0000`) as Args;
      const query = build(...placeholders).compile();
      const slots = query.parameters.map((p) => placeholders.indexOf(p as string));
      compiled = { query, slots };
    }
    const { query, slots } = compiled;
    const parameters = slots.map((slot, i) => (slot < 0 ? query.parameters[i] : args[slot]));
    const rows = await db.read<Row>({ ...query, parameters });
    return rows[0];
  };
}
