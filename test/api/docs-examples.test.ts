import { keyPath } from '@sundial/testing/harness';
import { useScheduler } from './scheduler-fixture';

/** An operation of /docs-json, as far as its JSON body goes. */
interface Operation {
  requestBody?: { content: Record<string, { schema: { example?: unknown } }> };
}

/** Each /v1 route with a body: where its example is sent (a key in the path filled in) and its answer. */
const ROUTES = [
  { route: 'post /v1/timers', url: '/v1/timers', status: 201 },
  { route: 'put /v1/timers/{key}', url: keyPath('docs:put'), status: 201 },
  { route: 'post /v1/timers/{key}/reschedule', url: `${keyPath('docs:put')}/reschedule`, status: 200 },
  { route: 'post /v1/timers/{key}/backfill', url: `${keyPath('docs:hourly')}/backfill`, status: 200 },
  { route: 'post /v1/preview', url: '/v1/preview', status: 200 },
];

/**
 * /docs (Swagger UI): "Try it out" on a route with a body fills it with the route's example, and without
 * one makes up a body of every field (delay, at, every and cron at once), which the API refuses. A
 * newcomer's first click must schedule: each documented example is accepted as it is.
 */
describe('the OpenAPI document at /docs: each body example is accepted as Try it out sends it', () => {
  const app = useScheduler();

  it('gives every /v1 route with a body an example, and the route takes it', async () => {
    const document = await app.api<{ paths: Record<string, Record<string, Operation>> }>('GET', '/docs-json');
    const withBody = Object.entries(document.body.paths).flatMap(([path, operations]) =>
      Object.entries(operations)
        .filter(([, operation]) => operation.requestBody)
        .map(([method, operation]) => ({ route: `${method} ${path}`, operation })),
    );
    expect(withBody.map(({ route }) => route).sort()).toEqual(ROUTES.map(({ route }) => route).sort());
    const hourly = { handler: 'log', cron: '0 * * * *', tz: 'UTC' };
    expect((await app.api('PUT', keyPath('docs:hourly'), hourly)).status).toBe(201);
    for (const { route, url, status } of ROUTES) {
      const { operation } = withBody.find((entry) => entry.route === route)!;
      const example = operation.requestBody!.content['application/json'].schema.example;
      const reply = await app.api(route.split(' ')[0].toUpperCase(), url, example);
      expect({ route, example, status: reply.status }).toEqual({ route, example: expect.anything(), status });
    }
  });
});
