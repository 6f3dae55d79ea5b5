import { createContext, useCallback, useContext, useRef, type ReactNode } from 'react';
import { useLoad } from '../hooks';

/** The parts of the served OpenAPI document the console reads at run time. */
export interface OpenApiDocument {
  paths: Record<string, Record<string, { requestBody?: { content: Record<string, { schema: JsonSchema }> } }>>;
  components?: { schemas?: Record<string, JsonSchema> };
}

export interface JsonSchema {
  type?: string | string[];
  minimum?: number;
  maximum?: number;
  enum?: unknown[];
  properties?: Record<string, JsonSchema>;
  items?: JsonSchema;
  anyOf?: JsonSchema[];
  description?: string;
}

/** The document with every `$ref` to a component replaced by the component (the document has no cycles). */
function inlined<T>(node: T, schemas: Record<string, JsonSchema>): T {
  if (Array.isArray(node)) return node.map((item: unknown) => inlined(item, schemas)) as T;
  if (typeof node !== 'object' || node === null) return node;
  const ref = (node as { $ref?: unknown }).$ref;
  if (typeof ref === 'string' && ref.startsWith('#/components/schemas/')) return inlined(schemas[ref.slice(21)] as T, schemas);
  return Object.fromEntries(Object.entries(node).map(([key, value]) => [key, inlined(value, schemas)])) as T;
}

type Loader = () => Promise<OpenApiDocument>;
const DocumentContext = createContext<Loader | null>(null);

/**
 * Fetches /openapi.json once per session, when a page first needs it, to read ranges off the
 * schemas, so sliders follow the service rather than a copy of its numbers.
 */
export function DocumentProvider({ children }: { children: ReactNode }) {
  const promise = useRef<Promise<OpenApiDocument> | null>(null);
  // One identity for the provider's life, so pages that load the document do it once.
  const load = useCallback<Loader>(() => {
    promise.current ??= fetch('/openapi.json').then(async (r) => {
      if (!r.ok) throw new Error(`openapi.json: HTTP ${r.status}`);
      const doc = (await r.json()) as OpenApiDocument;
      return { paths: inlined(doc.paths, doc.components?.schemas ?? {}) };
    });
    // A failed fetch is not kept: the next page that needs the document tries again.
    promise.current.catch(() => { promise.current = null; });
    return promise.current;
  }, []);
  return <DocumentContext.Provider value={load}>{children}</DocumentContext.Provider>;
}

export function useDocument() {
  const load = useContext(DocumentContext);
  if (!load) throw new Error('useDocument outside DocumentProvider');
  return useLoad(load, [load]);
}

/** The JSON body schema of an operation. */
export function bodySchema(doc: OpenApiDocument, path: string, method: string): JsonSchema | undefined {
  return doc.paths[path]?.[method]?.requestBody?.content['application/json']?.schema;
}

/** Follows a property path through objects and nullable unions. */
export function schemaAt(schema: JsonSchema | undefined, path: readonly string[]): JsonSchema | undefined {
  let current = schema;
  for (const key of path) {
    const object = current?.anyOf?.find((s) => s.properties) ?? current;
    current = object?.properties?.[key];
  }
  return current?.anyOf?.find((s) => s.type !== 'null') ?? current;
}
