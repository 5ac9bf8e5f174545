import Ajv, { type ValidateFunction } from 'ajv';
import addFormats from 'ajv-formats';

/** The parts of an OpenAPI 3 document the contract check reads. */
export interface OpenApiDocument {
  paths: Record<string, Record<string, OpenApiOperation>>;
  components?: { schemas?: Record<string, unknown> };
}

export interface OpenApiOperation {
  parameters?: { name: string; in: string; schema?: object; description?: string }[];
  requestBody?: object;
  responses: Record<
    string,
    { content?: Record<string, { schema?: object }>; headers?: Record<string, { required?: boolean }> }
  >;
}

/** A real answer: its status, its parsed body, its Content-Type and (when checked) its headers. */
export interface ContractReply {
  status: number;
  body: unknown;
  contentType: string | null;
  headers?: Headers;
}

const COMPONENTS_ID = 'openapi-components.json';

/**
 * OpenAPI 3.0 schema → JSON Schema as a generated client reads it: `$ref`s point into the components
 * (added to Ajv under their own id), and an object that lists its properties takes no others — a field
 * the document does not name is a field no generated type has.
 */
function strict(schema: unknown): unknown {
  if (Array.isArray(schema)) return schema.map(strict);
  if (schema === null || typeof schema !== 'object') return schema;
  const out: Record<string, unknown> = {};
  for (const [name, value] of Object.entries(schema)) {
    if (name === '$ref' && typeof value === 'string') out[name] = `${COMPONENTS_ID}${value}`;
    else if (name === 'properties' && value && typeof value === 'object') {
      out[name] = Object.fromEntries(Object.entries(value).map(([key, sub]) => [key, strict(sub)]));
    } else if (name === 'example') out[name] = value;
    else out[name] = strict(value);
  }
  if ('properties' in out && !('additionalProperties' in out)) out.additionalProperties = false;
  return out;
}

/**
 * Checks real answers against the document (docs/spec.md §5.2): the status is one the operation lists,
 * the headers it says are required came (`Location` of a 201), a JSON body validates against that response's schema, and a documented body is not missing.
 * Returns the mismatches as `<METHOD> <path> <status>: what differed`.
 */
export function contractChecker(
  document: OpenApiDocument,
): (route: string, reply: ContractReply) => string[] {
  const ajv = new Ajv({ strict: false, allErrors: true });
  addFormats(ajv);
  ajv.addSchema(strict({ components: document.components ?? {} }) as object, COMPONENTS_ID);
  const compiled = new Map<object, ValidateFunction>();
  return (route, reply) => {
    const [method, path] = route.split(' ');
    const where = `${method.toUpperCase()} ${path} ${reply.status}`;
    const operation = document.paths[path]?.[method];
    if (!operation) return [`${method.toUpperCase()} ${path}: no such operation in the document`];
    const response = operation.responses[String(reply.status)] ?? operation.responses.default;
    if (!response) return [`${where}: status not documented (lists ${Object.keys(operation.responses)})`];
    const missing = Object.entries(response.headers ?? {})
      .filter(([name, header]) => header.required && reply.headers && !reply.headers.has(name))
      .map(([name]) => `${where}: documented header ${name} missing`);
    if (missing.length > 0) return missing;
    const schema = response.content?.['application/json']?.schema;
    const isJson = reply.contentType?.includes('json') ?? false;
    if (!schema) return isJson ? [`${where}: JSON body ${brief(reply.body)} has no documented schema`] : [];
    if (!isJson) return [`${where}: documented a JSON body, got ${reply.contentType ?? 'no body'}`];
    let validate = compiled.get(schema);
    if (!validate) compiled.set(schema, (validate = ajv.compile(strict(schema) as object)));
    if (validate(reply.body)) return [];
    return (validate.errors ?? []).map(
      (error) => `${where}: body${error.instancePath} ${error.message} ${JSON.stringify(error.params)}`,
    );
  };
}

/** A body, shortened for a message. */
export function brief(body: unknown): string {
  const text = JSON.stringify(body);
  return text.length > 80 ? `${text.slice(0, 77)}...` : text;
}

/**
 * Where the document says `type: object` and no more (no `properties`, no `additionalProperties`): a
 * generated client types that as an empty object, leaving every field of it untyped (preview's `spec`
 * was one). Each as `<operation or component> <path in the schema>`.
 */
export function untypedObjects(document: OpenApiDocument): string[] {
  const found: string[] = [];
  const walk = (schema: unknown, where: string): void => {
    if (schema === null || typeof schema !== 'object') return;
    const node = schema as Record<string, unknown>;
    if (node.type === 'object' && !('properties' in node) && !('additionalProperties' in node))
      found.push(where);
    // an example is a value, not a schema
    for (const [name, sub] of Object.entries(node)) if (name !== 'example') walk(sub, `${where}.${name}`);
  };
  walk(document.components?.schemas, 'components.schemas');
  for (const [path, operations] of Object.entries(document.paths)) {
    for (const [method, operation] of Object.entries(operations)) {
      const route = `${method.toUpperCase()} ${path}`;
      walk(operation.requestBody, `${route} requestBody`);
      for (const [status, response] of Object.entries(operation.responses))
        walk(response, `${route} ${status}`);
    }
  }
  return found;
}
