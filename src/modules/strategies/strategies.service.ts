import type { Context } from '../../context.ts';
import { turnProblems } from '../../calls/turns/settings.ts';
import { badRequest, conflict, notFound } from '../../http/errors.ts';
import type { Edit } from '../../http/updates.ts';
import { firstUserOf } from '../assistants/assistants.repository.ts';
import { deleteStrategyRow, findStrategy, insertStrategy, toStrategy, updateStrategyRow } from './strategies.repository.ts';
import type { Strategy, StrategyWrite } from './strategies.schemas.ts';

type Deps = Pick<Context, 'db' | 'clock'>;
const NAME = 'LLM generation strategy';

/** The rules between fields that the schema cannot state: a 400 naming the field, and nothing changes. */
function checkParameters(body: StrategyWrite): void {
  const problems = turnProblems(body.parameters.turn);
  if (problems.length) throw badRequest('The strategy\'s parameters contradict each other', problems);
}

export async function createStrategy({ db, clock }: Deps, organizationId: string, body: StrategyWrite): Promise<Strategy> {
  checkParameters(body);
  const at = clock.now().toISOString();
  const row = {
    id: crypto.randomUUID(), organization_id: organizationId, name: body.name, type: body.type,
    parameters: JSON.stringify(body.parameters), created_at: at, updated_at: at,
  };
  await db.kysely.transaction().execute((trx) => insertStrategy(trx, row));
  return toStrategy(row);
}

export async function getStrategy({ db }: Deps, organizationId: string, id: string): Promise<Strategy> {
  const row = await findStrategy(db.kysely, organizationId, id);
  if (!row) throw notFound(NAME);
  return toStrategy(row);
}

export async function updateStrategy(deps: Deps, organizationId: string, id: string, edit: Edit<Strategy, StrategyWrite>): Promise<void> {
  const body = edit(await getStrategy(deps, organizationId, id));
  checkParameters(body);
  await updateStrategyRow(deps.db.kysely, organizationId, id, {
    name: body.name, type: body.type, parameters: JSON.stringify(body.parameters), updated_at: deps.clock.now().toISOString(),
  });
}

/** 409 while an assistant or agent uses the strategy. */
export async function deleteStrategy({ db }: Deps, organizationId: string, id: string): Promise<void> {
  await db.kysely.transaction().execute(async (trx) => {
    if (!(await findStrategy(trx, organizationId, id))) throw notFound(NAME);
    const user = await firstUserOf(trx, 'strategy_id', id);
    if (user) throw conflict(`The ${user.kind} "${user.name}" uses this strategy`);
    await deleteStrategyRow(trx, organizationId, id);
  });
}
