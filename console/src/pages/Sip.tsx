import { inOrganization } from '../api/client';
import { ErrorBox, Status } from '../components/form';
import { Table } from '../components/Table';
import { useLoad, useTitle } from '../hooks';
import { useCan, useScope, useSession } from '../session';
import { CredentialForm, CredentialRow } from '../sip/Credentials';
import { NumberForm, NumberRow } from '../sip/Numbers';

/**
 * SIP credentials (Validate shows the registrar's answer) and the numbers they carry; who may
 * write SIP adds, edits and deletes both, and validates credentials again after a change.
 */
export default function Sip() {
  useTitle('SIP');
  const { api } = useSession();
  const scope = useScope();
  const credentials = useLoad(async () => (await inOrganization(api, scope).listSipCredentials({ query: { size: 100 } })).data, [api, scope]);
  const writable = useCan()('sip:write');
  const numbers = useLoad(async () => (await inOrganization(api, scope).listSipNumbers({ query: { size: 100 } })).data, [api, scope]);
  const changed = () => {
    credentials.reload();
    numbers.reload();
  };
  return (
    <>
      <h1>SIP</h1>
      <section className="card" aria-labelledby="credentials">
        <h2 id="credentials">Credentials</h2>
        <ErrorBox error={credentials.error} />
        {credentials.data && (credentials.data.length === 0 ? <Status>No SIP credentials yet.</Status> : (
          <Table caption="SIP credentials" head={['Name', 'Registrar', 'User', 'Max tasks', ...(writable ? ['Check and change'] : [])]}>
            {/* Keyed by the last change too: an edited row starts again without the old validation's answer. */}
            {credentials.data.map((c) => <CredentialRow key={`${c.id}-${c.updatedAt}`} credential={c} writable={writable} onChanged={changed} />)}
          </Table>
        ))}
        {writable && <CredentialForm onSaved={credentials.reload} />}
      </section>
      <section className="card" aria-labelledby="numbers">
        <h2 id="numbers">Numbers</h2>
        <ErrorBox error={numbers.error} />
        {numbers.data && (numbers.data.length === 0 ? <Status>No SIP numbers yet.</Status> : (
          <Table caption="SIP numbers" head={['Number', 'Name', 'Credentials', 'Changed', ...(writable ? ['Change'] : [])]}>
            {numbers.data.map((n) => <NumberRow key={`${n.id}-${n.updatedAt}`} number={n} credentials={credentials.data ?? []} writable={writable} onChanged={numbers.reload} />)}
          </Table>
        ))}
        {writable && <NumberForm credentials={credentials.data ?? []} onSaved={numbers.reload} />}
      </section>
    </>
  );
}
